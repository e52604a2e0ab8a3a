#include "server/check.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "server/check_search.hpp"
#include "server/gateway.hpp"

namespace mcpgw::server {
namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += ',';
    out += s;
  }
  return out.empty() ? "-" : out;
}

/// The modes (besides "all") a tool is visible in.
std::vector<std::string> modes_of(const catalog::Snapshot& s, const catalog::ExposedTool& t) {
  std::vector<std::string> out;
  for (std::size_t m = 1; m < s.modes.size(); ++m)
    if (t.in_mode[m]) out.push_back(s.modes[m]);
  return out;
}

}  // namespace

int run_check(config::Config cfg, bool as_json, std::ostream& out, const std::optional<std::string>& search) {
  std::string source = cfg.source;
  std::string default_mode = cfg.default_mode;
  // What each stdio server runs, as resolved against the file's directory.
  std::map<std::string, config::Server> by_name;
  for (const auto& s : cfg.servers) by_name.emplace(s.name, s);
  auto stdio = [&](const std::string& name) -> const config::Server* {
    auto it = by_name.find(name);
    return it != by_name.end() && it->second.transport == config::Server::Transport::Stdio ? &it->second : nullptr;
  };
  Gateway gw(std::move(cfg));
  gw.start_upstreams();
  gw.await_upstreams();  // a failure shows as errors in the snapshot
  auto snap = gw.snapshot();
  auto ups = gw.upstreams();
  auto plugins = gw.plugins();
  std::vector<std::string> errors = gw.plugin_errors();
  errors.insert(errors.end(), snap->errors.begin(), snap->errors.end());
  for (const auto& u : ups)
    if (!u->ready()) errors.push_back("upstream " + u->name() + " is not connected: " + u->status());
  std::vector<std::string> warnings = snap->warnings;
  for (auto& w : catalog::name_warnings(*snap)) warnings.push_back(std::move(w));
  bool ok = errors.empty();

  if (as_json) {
    json::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    auto strings = [&](const std::vector<std::string>& v) {
      json::Value arr(rapidjson::kArrayType);
      for (const auto& s : v) arr.PushBack(json::str(s, a), a);
      return arr;
    };
    d.AddMember("config", json::str(source, a), a);
    d.AddMember("valid", ok, a);
    d.AddMember("default_mode", json::str(default_mode, a), a);
    json::Value servers(rapidjson::kArrayType), tools(rapidjson::kArrayType), loaded(rapidjson::kArrayType);
    for (const auto& p : plugins) {
      json::Value e(rapidjson::kObjectType);
      e.AddMember("name", json::str(p->name(), a), a);
      e.AddMember("version", json::str(p->version(), a), a);
      e.AddMember("path", json::str(p->config().path, a), a);
      e.AddMember("tools", p->tools().Size(), a);
      loaded.PushBack(e, a);
    }
    for (const auto& u : ups) {
      auto l = u->listing();
      json::Value s(rapidjson::kObjectType);
      s.AddMember("name", json::str(u->name(), a), a);
      s.AddMember("connected", u->ready(), a);
      s.AddMember("status", json::str(u->status(), a), a);
      if (const config::Server* c = stdio(u->name())) {
        s.AddMember("command", json::str(c->command, a), a);
        s.AddMember("cwd", json::str(c->cwd, a), a);
      }
      s.AddMember("tools", l->tools.Size(), a);
      s.AddMember("resources", l->resources.Size(), a);
      s.AddMember("prompts", l->prompts.Size(), a);
      servers.PushBack(s, a);
    }
    for (const auto& t : snap->tools) {
      json::Value e(rapidjson::kObjectType);
      e.AddMember("name", json::str(t.name, a), a);
      e.AddMember(t.composite ? "plugin" : "server", json::str(t.origin->name(), a), a);
      e.AddMember("upstream_name", json::str(t.upstream_name, a), a);
      e.AddMember("slices", strings(t.slices), a);
      e.AddMember("modes", strings(modes_of(*snap, t)), a);
      e.AddMember("welcome", t.welcome, a);
      tools.PushBack(e, a);
    }
    json::Value welcome(rapidjson::kArrayType);
    for (std::size_t m = 0; m < snap->modes.size(); ++m) {
      json::Value e(rapidjson::kObjectType);
      e.AddMember("mode", json::str(snap->modes[m], a), a);
      if (auto w = snap->welcome_by_mode[m]) e.AddMember("tool", json::str(snap->tools[*w].name, a), a);
      else e.AddMember("tool", json::Value(), a);
      e.AddMember("reason", json::str(snap->welcome_reason[m], a), a);
      welcome.PushBack(e, a);
    }
    d.AddMember("servers", servers, a);
    d.AddMember("plugins", loaded, a);
    d.AddMember("tools", tools, a);
    d.AddMember("welcome", welcome, a);
    add_search_report(*snap, search, d);
    d.AddMember("errors", strings(errors), a);
    d.AddMember("warnings", strings(warnings), a);
    out << json::write(d) << "\n";
    return ok ? 0 : 1;
  }

  out << "config: " << source << "\n\nupstreams:\n";
  for (const auto& u : ups) {
    auto l = u->listing();
    out << "  " << u->name() << ": " << u->status() << " (" << l->tools.Size() << " tools, " << l->resources.Size()
        << " resources, " << l->prompts.Size() << " prompts)\n";
    if (const config::Server* c = stdio(u->name())) out << "    command: " << c->command << " (in " << c->cwd << ")\n";
  }
  if (!plugins.empty()) out << "\nplugins:\n";
  for (const auto& p : plugins)
    out << "  " << p->name() << " " << p->version() << ": " << p->config().path << " (" << p->tools().Size()
        << " tools)\n";
  std::vector<std::array<std::string, 5>> rows;
  rows.push_back({"NAME", "SERVER", "SLICES", "MODES", "WELCOME"});
  for (const auto& t : snap->tools) {
    // Name the upstream tool where the exposed name does not show it
    // (shortened names).
    bool shown = t.name.size() >= t.upstream_name.size() &&
                 t.name.compare(t.name.size() - t.upstream_name.size(), t.upstream_name.size(), t.upstream_name) == 0;
    std::string origin = t.composite ? "plugin " + t.origin->name() : t.origin->name();
    rows.push_back({t.name, origin + (shown ? "" : " (" + t.upstream_name + ")"),
                    joined(t.slices), joined(modes_of(*snap, t)), t.welcome ? "yes" : ""});
  }
  std::array<std::size_t, 5> width{};
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  out << "\ntools (" << snap->tools.size() << ", default mode " << default_mode << "):\n";
  for (const auto& r : rows) {
    std::string line = "  ";
    for (std::size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  out << "\nwelcome tool by mode:\n";
  for (std::size_t m = 0; m < snap->modes.size(); ++m) {
    auto w = snap->welcome_by_mode[m];
    out << "  " << snap->modes[m] << ": " << (w ? snap->tools[*w].name : std::string("none")) << " ("
        << snap->welcome_reason[m] << ")\n";
  }
  print_search_report(*snap, search, out);
  out << "\n";
  for (const auto& e : errors) out << "error: " << e << "\n";
  for (const auto& w : warnings) out << "warning: " << w << "\n";
  if (errors.empty() && warnings.empty()) out << "no problems found\n";
  out << (ok ? "valid\n" : "invalid\n");
  return ok ? 0 : 1;
}

}  // namespace mcpgw::server
