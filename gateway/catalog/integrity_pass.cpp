#include "catalog/integrity_pass.hpp"

#include "catalog/naming.hpp"
#include "integrity/invisible.hpp"

namespace mcpgw::catalog {

const integrity::ToolReport* IntegrityView::withheld_tool(std::string_view name) const {
  auto it = withheld.find(std::string(name));
  return it == withheld.end() ? nullptr : &reports[it->second];
}

const integrity::ToolReport* IntegrityView::withheld_tool(const std::string& server, std::string_view name) const {
  auto it = withheld_upstream.find(server + '\n' + std::string(name));
  return it == withheld_upstream.end() ? nullptr : &reports[it->second];
}

IntegrityPass::IntegrityPass(const IntegrityInput& in, const config::Naming& naming,
                             const std::vector<std::shared_ptr<upstream::Upstream>>& upstreams)
    : in_(in) {
  view_.mode = in.mode;
  if (in.mode == integrity::Mode::Off || !in.scanner) return;
  view_.unread = !in.ledger;
  bool provisional = false;
  for (const auto& up : upstreams) {
    provisional |= !up->settled();
    const auto& sc = up->config();
    auto listing = up->listing();
    for (const auto& t : listing->tools.GetArray()) {
      std::string uname(json::get_string(t, "name").value_or(""));
      for (std::string name : {uname, exposed_name(naming, sc.name, uname, sc.prefix)}) {
        if (!integrity::Scanner::distinctive(name)) continue;
        auto& owners = owners_[name];
        if (owners.empty() || owners.back() != sc.name) owners.push_back(sc.name);
      }
    }
  }
  judge_ = std::make_unique<integrity::Judge>(in.mode, in.ledger, in.why, in.now_ms, *in.scanner, owners_, provisional);
}

bool IntegrityPass::admit(const std::string& server, const std::string& uname, const std::string& name,
                          json::Value& def, json::Allocator& a) {
  if (in_.strip_invisible)
    if (std::size_t n = integrity::strip_tool(def, a))
      view_.stripped.push_back("tool " + name + ": " + std::to_string(n) + " removed");
  // Plugins are the operator's own code: pins are the servers'.
  if (!judge_ || server.empty()) return true;
  integrity::ToolReport report = judge_->judge(server, name, def);
  if (report.state == integrity::State::Pinned) {
    ++view_.pinned;
    return true;
  }
  const bool withheld = report.withheld;
  if (withheld) {
    view_.withheld.emplace(name, view_.reports.size());
    view_.withheld_upstream.emplace(server + '\n' + uname, view_.reports.size());
  }
  view_.reports.push_back(std::move(report));
  return !withheld;
}

void IntegrityPass::strip_name(std::string& name) const {
  if (in_.strip_invisible) integrity::strip_invisible(name);
}

void IntegrityPass::strip_entry(json::Value& entry, json::Allocator& a, const std::string& what) {
  if (!in_.strip_invisible) return;
  if (std::size_t n = integrity::strip_entry(entry, a)) view_.stripped.push_back(what + ": " + std::to_string(n) + " removed");
}

IntegrityView IntegrityPass::take() {
  if (judge_) view_.changes = judge_->take_changes();
  return std::move(view_);
}

}  // namespace mcpgw::catalog
