#include "server/check.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "server/check_redaction.hpp"
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

/// What `mcpgw check` found.
struct Findings {
  Gateway& gw;
  std::string source, default_mode;
  std::shared_ptr<const catalog::Snapshot> snap;
  std::vector<std::shared_ptr<upstream::Upstream>> ups;
  std::vector<std::shared_ptr<plugin::Plugin>> plugins;
  std::map<std::string, config::Server> stdio;  ///< what each stdio server runs, as resolved against the file
  std::map<std::string, oauth::CheckReport> oauth;
  std::vector<std::string> errors, warnings;
  bool ok = false;
  config::Redact redact;
  /// check --principal: who, and per tool the modes it sees it in (empty:
  /// hidden); no principal: every tool, `seen` empty.
  std::string principal{};
  std::vector<std::vector<std::string>> seen{};

  bool shown(std::size_t i) const { return seen.empty() || !seen[i].empty(); }
  /// The modes (besides "all") tool `i` is listed in, to whoever is shown.
  std::vector<std::string> modes(std::size_t i) const {
    if (seen.empty()) return modes_of(*snap, snap->tools[i]);
    std::vector<std::string> out;
    for (const auto& m : seen[i])
      if (m != "all") out.push_back(m);
    return out;
  }

  const config::Server* stdio_of(const std::string& name) const {
    auto it = stdio.find(name);
    return it != stdio.end() ? &it->second : nullptr;
  }
};

void print_json(const Findings& f, const std::optional<std::string>& search, std::ostream& out) {
  json::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  auto strings = [&](const std::vector<std::string>& v) {
    json::Value arr(rapidjson::kArrayType);
    for (const auto& s : v) arr.PushBack(json::str(s, a), a);
    return arr;
  };
  d.AddMember("config", json::str(f.source, a), a);
  d.AddMember("valid", f.ok, a);
  d.AddMember("default_mode", json::str(f.default_mode, a), a);
  if (!f.principal.empty()) d.AddMember("principal", json::str(f.principal, a), a);
  json::Value servers(rapidjson::kArrayType), tools(rapidjson::kArrayType), loaded(rapidjson::kArrayType);
  for (const auto& p : f.plugins) {
    json::Value e(rapidjson::kObjectType);
    e.AddMember("name", json::str(p->name(), a), a);
    e.AddMember("version", json::str(p->version(), a), a);
    e.AddMember("path", json::str(p->config().path, a), a);
    e.AddMember("tools", p->tools().Size(), a);
    loaded.PushBack(e, a);
  }
  for (const auto& u : f.ups) {
    auto l = u->listing();
    json::Value s(rapidjson::kObjectType);
    s.AddMember("name", json::str(u->name(), a), a);
    s.AddMember("connected", u->ready(), a);
    s.AddMember("status", json::str(u->status(), a), a);
    if (const config::Server* c = f.stdio_of(u->name())) {
      s.AddMember("command", json::str(c->command, a), a);
      s.AddMember("cwd", json::str(c->cwd, a), a);
    }
    s.AddMember("tools", l->tools.Size(), a);
    s.AddMember("resources", l->resources.Size(), a);
    s.AddMember("prompts", l->prompts.Size(), a);
    servers.PushBack(s, a);
  }
  for (std::size_t i = 0; i < f.snap->tools.size(); ++i) {
    if (!f.shown(i)) continue;
    const catalog::ExposedTool& t = f.snap->tools[i];
    json::Value e(rapidjson::kObjectType);
    e.AddMember("name", json::str(t.name, a), a);
    e.AddMember(t.composite ? "plugin" : "server", json::str(t.origin->name(), a), a);
    e.AddMember("upstream_name", json::str(t.upstream_name, a), a);
    e.AddMember("slices", strings(t.slices), a);
    e.AddMember("modes", strings(f.modes(i)), a);
    e.AddMember("welcome", t.welcome, a);
    tools.PushBack(e, a);
  }
  json::Value welcome(rapidjson::kArrayType);
  for (std::size_t m = 0; m < f.snap->modes.size(); ++m) {
    json::Value e(rapidjson::kObjectType);
    e.AddMember("mode", json::str(f.snap->modes[m], a), a);
    if (auto w = f.snap->welcome_by_mode[m]) e.AddMember("tool", json::str(f.snap->tools[*w].name, a), a);
    else e.AddMember("tool", json::Value(), a);
    e.AddMember("reason", json::str(f.snap->welcome_reason[m], a), a);
    welcome.PushBack(e, a);
  }
  json::Value reports(rapidjson::kArrayType);
  for (const auto& [name, report] : f.oauth) {
    json::Value e(rapidjson::kObjectType);
    e.AddMember("server", json::str(name, a), a);
    e.AddMember("grant", json::str(f.gw.oauth()->find(name)->grant_name(), a), a);
    e.AddMember("discovery", json::str(report.discovery, a), a);
    e.AddMember("credentials", json::str(report.credentials, a), a);
    e.AddMember("ok", report.ok, a);
    reports.PushBack(e, a);
  }
  d.AddMember("servers", servers, a);
  d.AddMember("oauth", reports, a);
  d.AddMember("plugins", loaded, a);
  d.AddMember("tools", tools, a);
  d.AddMember("welcome", welcome, a);
  add_search_report(*f.snap, search, d);
  d.AddMember("redaction", redaction_json(f.redact, a), a);
  d.AddMember("errors", strings(f.errors), a);
  d.AddMember("warnings", strings(f.warnings), a);
  out << json::write(d) << "\n";
}

void print_text(const Findings& f, const std::optional<std::string>& search, std::ostream& out) {
  out << "config: " << f.source << "\n\nupstreams:\n";
  for (const auto& u : f.ups) {
    auto l = u->listing();
    out << "  " << u->name() << ": " << u->status() << " (" << l->tools.Size() << " tools, " << l->resources.Size()
        << " resources, " << l->prompts.Size() << " prompts)\n";
    if (const config::Server* c = f.stdio_of(u->name())) out << "    command: " << c->command << " (in " << c->cwd << ")\n";
  }
  if (!f.oauth.empty()) out << "\noauth:\n";
  for (const auto& [name, report] : f.oauth)
    out << "  " << name << " (" << f.gw.oauth()->find(name)->grant_name() << "):\n    discovery: " << report.discovery
        << "\n    credentials: " << report.credentials << "\n";
  if (!f.plugins.empty()) out << "\nplugins:\n";
  for (const auto& p : f.plugins)
    out << "  " << p->name() << " " << p->version() << ": " << p->config().path << " (" << p->tools().Size()
        << " tools)\n";
  std::vector<std::array<std::string, 5>> rows;
  rows.push_back({"NAME", "SERVER", "SLICES", "MODES", "WELCOME"});
  std::size_t count = 0;
  for (std::size_t i = 0; i < f.snap->tools.size(); ++i) {
    if (!f.shown(i)) continue;
    ++count;
    const catalog::ExposedTool& t = f.snap->tools[i];
    // Name the upstream tool where the exposed name does not show it
    // (shortened names).
    bool shown = t.name.size() >= t.upstream_name.size() &&
                 t.name.compare(t.name.size() - t.upstream_name.size(), t.upstream_name.size(), t.upstream_name) == 0;
    std::string origin = t.composite ? "plugin " + t.origin->name() : t.origin->name();
    rows.push_back({t.name, origin + (shown ? "" : " (" + t.upstream_name + ")"),
                    joined(t.slices), joined(f.modes(i)), t.welcome ? "yes" : ""});
  }
  std::array<std::size_t, 5> width{};
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  out << "\ntools (" << count << ", default mode " << f.default_mode
      << (f.principal.empty() ? std::string() : ", as principal " + f.principal + " sees them under the policies")
      << "):\n";
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
  for (std::size_t m = 0; m < f.snap->modes.size(); ++m) {
    auto w = f.snap->welcome_by_mode[m];
    out << "  " << f.snap->modes[m] << ": " << (w ? f.snap->tools[*w].name : std::string("none")) << " ("
        << f.snap->welcome_reason[m] << ")\n";
  }
  print_search_report(*f.snap, search, out);
  print_redaction(f.redact, out);
  out << "\n";
  for (const auto& e : f.errors) out << "error: " << e << "\n";
  for (const auto& w : f.warnings) out << "warning: " << w << "\n";
  if (f.errors.empty() && f.warnings.empty()) out << "no problems found\n";
  out << (f.ok ? "valid\n" : "invalid\n");
}


}  // namespace

int run_check(config::Config cfg, bool as_json, std::ostream& out, const std::optional<std::string>& search,
              const std::optional<PrincipalView>& as) {
  std::string source = cfg.source, default_mode = cfg.default_mode;
  config::Redact redact = cfg.redact;
  std::vector<config::Policy> policies = cfg.policies;
  std::map<std::string, config::Server> stdio;
  for (const auto& s : cfg.servers)
    if (s.transport == config::Server::Transport::Stdio) stdio.emplace(s.name, s);
  Gateway gw(std::move(cfg));
  // check looks: what it sees is judged against the pins, never pinned.
  gw.pins().set_read_only();
  gw.start_upstreams();
  // Judged against the pins: with Redis they arrive once it is connected.
  auto pins = gw.await_pins(std::chrono::seconds(10));
  gw.await_upstreams();  // a failure shows as errors in the snapshot
  Findings f{gw, source, default_mode, gw.snapshot(), gw.upstreams(), gw.plugins(), std::move(stdio), {}, {}, {}, false, std::move(redact)};
  f.errors = gw.plugin_errors();
  f.errors.insert(f.errors.end(), f.snap->errors.begin(), f.snap->errors.end());
  for (const auto& u : f.ups)
    if (!u->ready()) f.errors.push_back("upstream " + u->name() + " is not connected: " + u->status());
  if (!gw.startup_error().empty()) f.errors.push_back(gw.startup_error());
  if (!pins) f.errors.push_back(pins.error());
  // OAuth upstreams: where their provider is and whether the gateway's own
  // credentials work (never a token).
  f.oauth = gw.check_oauth(std::chrono::seconds(15));
  for (const auto& [name, report] : f.oauth)
    if (!report.ok)
      f.errors.push_back("upstream " + name + ": " +
                         (report.credentials.empty() || !report.discovered ? report.discovery : report.credentials));
  f.warnings = f.snap->warnings;
  for (auto& w : catalog::name_warnings(*f.snap)) f.warnings.push_back(std::move(w));
  for (const auto& r : f.snap->integrity.reports) f.warnings.push_back(integrity_warning(r));
  f.ok = f.errors.empty();
  if (as) {
    f.principal = as->subject.principal;
    f.seen = modes_seen(*f.snap, *as, policies);
  }
  if (as_json) print_json(f, search, out);
  else print_text(f, search, out);
  return f.ok ? 0 : 1;
}

}  // namespace mcpgw::server
