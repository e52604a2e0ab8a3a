#include "server/status.hpp"

#include <chrono>

#include "upstream/breaker.hpp"

namespace mcpgw::server {
namespace {

using json::str;

/// Descriptions are cut here in the catalog view (the whole text is the tool's own).
constexpr std::size_t kDescriptionShown = 160;

json::Value upstream_entry(const upstream::Upstream& u, json::Allocator& a) {
  json::Value e(rapidjson::kObjectType);
  const auto& c = u.config();
  e.AddMember("name", str(c.name, a), a);
  e.AddMember("transport", json::ref(c.transport == config::Server::Transport::Http ? "http" : "stdio"), a);
  e.AddMember("target", str(c.transport == config::Server::Transport::Http ? c.url : c.command, a), a);
  e.AddMember("ready", u.ready(), a);
  e.AddMember("status", str(u.status(), a), a);
  e.AddMember("protocol", str(u.protocol(), a), a);
  auto listing = u.listing();
  e.AddMember("tools", listing->tools.IsArray() ? listing->tools.Size() : 0, a);
  e.AddMember("required", c.required, a);
  e.AddMember("proxied", c.proxy_tools, a);
  e.AddMember("circuit", str(upstream::state_name(u.circuit()), a), a);
  e.AddMember("waiting", u.calls_waiting(), a);
  auto trouble = u.last_trouble();
  if (!trouble.what.empty()) {
    json::Value t(rapidjson::kObjectType);
    t.AddMember("what", str(trouble.what, a), a);
    t.AddMember("unix_ms", trouble.unix_ms, a);
    e.AddMember("last_error", t, a);
  }
  return e;
}

json::Value numbers(const auto& values, json::Allocator& a) {
  json::Value arr(rapidjson::kArrayType);
  for (auto v : values) arr.PushBack(json::Value(v), a);
  return arr;
}

json::Value rounded(const std::vector<double>& values, json::Allocator& a) {
  json::Value arr(rapidjson::kArrayType);
  for (double v : values) arr.PushBack(json::Value(static_cast<double>(static_cast<std::int64_t>(v * 100)) / 100), a);
  return arr;
}

/// The catalog's generation, size, modes and errors.
json::Value catalog_entry(const catalog::Snapshot& snap, json::Allocator& a) {
  json::Value catalog(rapidjson::kObjectType);
  catalog.AddMember("generation", static_cast<std::uint64_t>(snap.generation), a);
  catalog.AddMember("tools", static_cast<std::uint64_t>(snap.tools.size()), a);
  json::Value modes(rapidjson::kArrayType);
  for (std::size_t i = 0; i < snap.modes.size(); ++i) {
    json::Value m(rapidjson::kObjectType);
    m.AddMember("name", str(snap.modes[i], a), a);
    m.AddMember("tools", static_cast<std::uint64_t>(i < snap.mode_tools.size() ? snap.mode_tools[i].size() : 0), a);
    m.AddMember("discovery", json::ref(i < snap.search_modes.size() && snap.search_modes[i] ? "search" : "all"), a);
    auto pick = i < snap.welcome_by_mode.size() ? snap.welcome_by_mode[i] : std::nullopt;
    if (pick && *pick < snap.tools.size()) m.AddMember("welcome", str(snap.tools[*pick].name, a), a);
    modes.PushBack(m, a);
  }
  catalog.AddMember("modes", modes, a);
  json::Value problems(rapidjson::kArrayType);
  for (const auto& e : snap.errors) problems.PushBack(str(e, a), a);
  catalog.AddMember("errors", problems, a);
  return catalog;
}

/// Sessions per principal (the largest few by name, the rest summed),
/// streams and suspended calls.
json::Value sessions_entry(const StatusInputs& in, json::Allocator& a) {
  json::Value sessions(rapidjson::kObjectType);
  std::size_t total = 0, others = 0, other_principals = 0;
  json::Value by(rapidjson::kArrayType);
  for (std::size_t i = 0; i < in.principals.size(); ++i) {
    const auto& [who, n] = in.principals[i];
    total += n;
    if (i >= kPrincipalsShown) {
      others += n;
      ++other_principals;
      continue;
    }
    json::Value e(rapidjson::kObjectType);
    e.AddMember("principal", str(who, a), a);
    e.AddMember("sessions", static_cast<std::uint64_t>(n), a);
    by.PushBack(e, a);
  }
  sessions.AddMember("total", static_cast<std::uint64_t>(total), a);
  sessions.AddMember("by_principal", by, a);
  sessions.AddMember("other_principals", static_cast<std::uint64_t>(other_principals), a);
  sessions.AddMember("other_sessions", static_cast<std::uint64_t>(others), a);
  sessions.AddMember("open_streams", static_cast<std::uint64_t>(in.open_streams), a);
  sessions.AddMember("suspended_calls", static_cast<std::uint64_t>(in.suspended), a);
  return sessions;
}

/// The recent refusals and failed calls, newest first.
json::Value recent_entries(const StatusInputs& in, json::Allocator& a) {
  json::Value recent(rapidjson::kArrayType);
  for (auto it = in.recent.rbegin(); it != in.recent.rend(); ++it) {
    json::Value e(rapidjson::kObjectType);
    e.AddMember("unix_ms", static_cast<std::int64_t>(it->unix_ms), a);
    auto put = [&](const char* key, const std::string& v) {
      if (!v.empty()) e.AddMember(json::Value(key, a), str(v, a), a);
    };
    put("event", it->event);
    put("outcome", it->outcome);
    put("principal", it->principal);
    put("mode", it->mode);
    put("tool", it->tool);
    put("server", it->server);
    put("upstream_tool", it->upstream_tool);
    put("reason", it->reason);
    put("trace_id", it->trace_id);
    if (it->ms >= 0) e.AddMember("ms", it->ms, a);
    recent.PushBack(e, a);
  }
  return recent;
}

/// integrity.pins: what waits for approval (docs/operations.md, "Tool integrity").
json::Value integrity_entry(const catalog::Snapshot& snap, const std::string& store_error, json::Allocator& a) {
  const auto& view = snap.integrity;
  json::Value e(rapidjson::kObjectType);
  const char* mode = view.mode == integrity::Mode::Block ? "block" : view.mode == integrity::Mode::Warn ? "warn" : "off";
  e.AddMember("pins", json::ref(mode), a);
  e.AddMember("pinned", static_cast<std::uint64_t>(view.pinned), a);
  if (!store_error.empty()) e.AddMember("store_error", str(store_error, a), a);
  json::Value waiting(rapidjson::kArrayType);
  for (const auto& r : view.reports) {
    json::Value w(rapidjson::kObjectType);
    w.AddMember("server", str(r.server, a), a);
    w.AddMember("tool", str(r.tool, a), a);
    w.AddMember("state", str(integrity::name_of(r.state), a), a);
    w.AddMember("withheld", r.withheld, a);
    json::Value changes(rapidjson::kArrayType), findings(rapidjson::kArrayType);
    for (const auto& c : r.changes) changes.PushBack(str(c, a), a);
    for (const auto& f : r.findings) findings.PushBack(str(integrity::describe(f), a), a);
    w.AddMember("changes", changes, a);
    w.AddMember("findings", findings, a);
    waiting.PushBack(w, a);
  }
  e.AddMember("waiting", waiting, a);
  return e;
}

}  // namespace

std::string status_json(const StatusInputs& in) {
  json::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  d.AddMember("version", MCPGW_VERSION, a);
  d.AddMember("now_ms", static_cast<std::int64_t>(now), a);
  d.AddMember("started_ms", in.started_unix_ms, a);

  json::Value ups(rapidjson::kArrayType);
  for (const auto& u : in.upstreams) ups.PushBack(upstream_entry(*u, a), a);
  d.AddMember("upstreams", ups, a);

  json::Value plugins(rapidjson::kArrayType);
  for (const auto& p : in.plugins) {
    json::Value e(rapidjson::kObjectType);
    e.AddMember("name", str(p->name(), a), a);
    e.AddMember("version", str(p->version(), a), a);
    e.AddMember("tools", p->tools().IsArray() ? p->tools().Size() : 0, a);
    e.AddMember("isolation", str(p->config().isolation == config::Plugin::Isolation::None ? "none" : "process", a), a);
    const std::string down = p->down();
    e.AddMember("status", str(down.empty() ? "up" : "down: " + down, a), a);
    if (int pid = p->pid()) e.AddMember("pid", pid, a);
    if (auto limit = p->memory_limit(); !limit.empty()) e.AddMember("memory_limit", str(limit, a), a);
    plugins.PushBack(e, a);
  }
  d.AddMember("plugins", plugins, a);
  json::Value plugin_errors(rapidjson::kArrayType);
  for (const auto& e : in.plugin_errors) plugin_errors.PushBack(str(e, a), a);
  d.AddMember("plugin_errors", plugin_errors, a);

  d.AddMember("catalog", catalog_entry(*in.snapshot, a), a);
  d.AddMember("integrity", integrity_entry(*in.snapshot, in.pins_error, a), a);
  d.AddMember("sessions", sessions_entry(in, a), a);

  json::Value series(rapidjson::kObjectType);
  series.AddMember("bucket_s", CallHistory::kBucketSeconds, a);
  json::Value origins(rapidjson::kArrayType);
  for (const auto& s : in.series) {
    json::Value e(rapidjson::kObjectType);
    e.AddMember("origin", str(s.origin, a), a);
    e.AddMember("calls", numbers(s.calls, a), a);
    e.AddMember("errors", numbers(s.errors, a), a);
    e.AddMember("p50_ms", rounded(s.p50_ms, a), a);
    e.AddMember("p99_ms", rounded(s.p99_ms, a), a);
    origins.PushBack(e, a);
  }
  series.AddMember("origins", origins, a);
  d.AddMember("series", series, a);

  d.AddMember("recent", recent_entries(in, a), a);
  return json::write(d);
}

std::string catalog_json(const catalog::Snapshot& snap) {
  json::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("generation", static_cast<std::uint64_t>(snap.generation), a);
  json::Value modes(rapidjson::kArrayType);
  for (const auto& m : snap.modes) modes.PushBack(str(m, a), a);
  d.AddMember("modes", modes, a);
  json::Value tools(rapidjson::kArrayType);
  for (const auto& t : snap.tools) {
    json::Value e(rapidjson::kObjectType);
    e.AddMember("name", str(t.name, a), a);
    e.AddMember("origin", str(t.origin ? t.origin->name() : "", a), a);
    if (t.composite) e.AddMember("composite", true, a);
    json::Value slices(rapidjson::kArrayType);
    for (const auto& s : t.slices) slices.PushBack(str(s, a), a);
    e.AddMember("slices", slices, a);
    json::Value in(rapidjson::kArrayType);
    for (std::size_t i = 0; i < t.in_mode.size(); ++i)
      if (t.in_mode[i]) in.PushBack(static_cast<std::uint64_t>(i), a);
    e.AddMember("modes", in, a);
    if (t.welcome) e.AddMember("welcome", true, a);
    if (auto def = json::parse(t.definition)) {
      std::string desc(json::get_string(*def, "description").value_or(""));
      if (desc.size() > kDescriptionShown) {
        desc.resize(kDescriptionShown);
        // Not in the middle of a UTF-8 sequence.
        while (!desc.empty() && (static_cast<unsigned char>(desc.back()) & 0xC0) == 0x80) desc.pop_back();
        if (!desc.empty() && (static_cast<unsigned char>(desc.back()) & 0x80)) desc.pop_back();
        desc += "…";
      }
      if (!desc.empty()) e.AddMember("description", str(desc, a), a);
    }
    tools.PushBack(e, a);
  }
  d.AddMember("tools", tools, a);
  return json::write(d);
}

}  // namespace mcpgw::server
