#include "server/check.hpp"

#include <algorithm>

#include "server/gateway.hpp"

namespace mcpgw::server {

int run_check(config::Config cfg, bool as_json, std::ostream& out) {
  std::string source = cfg.source;
  Gateway gw(std::move(cfg));
  gw.start_upstreams();
  auto snap = gw.snapshot();
  auto ups = gw.upstreams();
  std::vector<std::string> problems = snap->warnings;
  for (const auto& u : ups)
    if (!u->ready()) problems.push_back("upstream " + u->name() + " is not connected: " + u->status());
  bool ok = problems.empty();

  if (as_json) {
    json::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    d.AddMember("config", json::str(source, a), a);
    d.AddMember("valid", ok, a);
    json::Value servers(rapidjson::kArrayType), tools(rapidjson::kArrayType), warnings(rapidjson::kArrayType);
    for (const auto& u : ups) {
      json::Value s(rapidjson::kObjectType);
      s.AddMember("name", json::str(u->name(), a), a);
      s.AddMember("connected", u->ready(), a);
      s.AddMember("status", json::str(u->status(), a), a);
      s.AddMember("tools", static_cast<unsigned>(u->tools()->tools.Size()), a);
      servers.PushBack(s, a);
    }
    for (const auto& t : snap->tools) {
      json::Value e(rapidjson::kObjectType);
      e.AddMember("name", json::str(t.name, a), a);
      e.AddMember("server", json::str(t.origin->name(), a), a);
      e.AddMember("upstream_name", json::str(t.upstream_name, a), a);
      tools.PushBack(e, a);
    }
    for (const auto& w : problems) warnings.PushBack(json::str(w, a), a);
    d.AddMember("servers", servers, a);
    d.AddMember("tools", tools, a);
    d.AddMember("warnings", warnings, a);
    out << json::write(d) << "\n";
    return ok ? 0 : 1;
  }

  out << "config: " << source << "\n\nupstreams:\n";
  for (const auto& u : ups)
    out << "  " << u->name() << ": " << u->status() << " (" << u->tools()->tools.Size() << " tools)\n";
  std::size_t w_name = 4, w_server = 6;
  for (const auto& t : snap->tools) {
    w_name = std::max(w_name, t.name.size());
    w_server = std::max(w_server, t.origin->name().size());
  }
  auto pad = [](const std::string& s, std::size_t w) { return s + std::string(w - std::min(w, s.size()) + 2, ' '); };
  out << "\ntools (" << snap->tools.size() << "):\n  " << pad("NAME", w_name) << pad("SERVER", w_server)
      << "UPSTREAM NAME\n";
  for (const auto& t : snap->tools)
    out << "  " << pad(t.name, w_name) << pad(t.origin->name(), w_server) << t.upstream_name << "\n";
  out << "\n";
  if (problems.empty()) out << "no problems found\n";
  for (const auto& w : problems) out << "warning: " << w << "\n";
  return ok ? 0 : 1;
}

}  // namespace mcpgw::server
