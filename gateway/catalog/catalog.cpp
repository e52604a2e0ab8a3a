#include "catalog/catalog.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "catalog/filter.hpp"
#include "catalog/hops_schema.hpp"
#include "catalog/naming.hpp"
#include "catalog/tool_search.hpp"
#include "mcp/resource_refs.hpp"
#include "mcp/tasks.hpp"

namespace mcpgw::catalog {
namespace {

/// Matches `uri` against an RFC 6570 template using only what resource
/// templates use in practice: literals, {var} (no '/'), {+var} / {#var}
/// (anything), and query forms {?a,b} at the end (the rest of the URI).
bool template_matches(std::string_view tmpl, std::string_view uri) {
  std::size_t t = 0, u = 0;
  while (t < tmpl.size()) {
    if (tmpl[t] != '{') {
      if (u >= uri.size() || uri[u] != tmpl[t]) return false;
      ++t;
      ++u;
      continue;
    }
    auto close = tmpl.find('}', t);
    if (close == std::string_view::npos) return false;
    char op = tmpl[t + 1];
    t = close + 1;
    if (op == '?' || op == '&') return true;
    bool reserved = op == '+' || op == '#';
    // The variable runs to the next literal character of the template.
    char stop = t < tmpl.size() && tmpl[t] != '{' ? tmpl[t] : '\0';
    std::size_t start = u;
    while (u < uri.size() && uri[u] != stop && (reserved || uri[u] != '/')) ++u;
    if (u == start) return false;
  }
  return u == uri.size();
}

std::string patched(const json::Value& def, const char* key, const std::string& value, IntegrityPass& integrity,
                    const std::string& what, const std::string* description = nullptr) {
  json::Document d = json::clone(def);
  json::set(d, key, json::str(value, d.GetAllocator()), d.GetAllocator());
  if (description) json::set(d, "description", json::str(*description, d.GetAllocator()), d.GetAllocator());
  integrity.strip_entry(d, d.GetAllocator(), what);
  return json::write(d);
}

/// A tool's definition as listed: its exposed name and description, the
/// references to its server's resources exposed (`ref_server` non-empty),
/// with chains resolved, `mcpgw/hops` declared in its outputSchema, and
/// `execution.taskSupport: "optional"` when the gateway runs it as a task.
json::Document tool_definition(const json::Value& def, const std::string& name, const std::string* description,
                               std::string_view ref_server, bool hops, bool gateway_task) {
  json::Document d = json::clone(def);
  auto& a = d.GetAllocator();
  json::set(d, "name", json::str(name, a), a);
  if (description) json::set(d, "description", json::str(*description, a), a);
  if (!ref_server.empty()) mcp::expose_tool_refs(ref_server, d, a);
  if (hops)
    if (json::Value* schema = json::find(d, "outputSchema")) declare_hops(*schema, a);
  if (gateway_task) {
    json::Value* execution = json::find(d, "execution");
    if (!execution || !execution->IsObject()) {
      json::set(d, "execution", json::Value(rapidjson::kObjectType), a);
      execution = json::find(d, "execution");
    }
    json::set(*execution, "taskSupport", json::Value("optional", a), a);
  }
  return d;
}

/// Adds the skill entries of `up` to the snapshot, their URIs exposed.
void add_skills(const std::shared_ptr<upstream::Upstream>& up, const upstream::Listing& listing, Snapshot& snap) {
  if (!listing.has_skills) return;
  snap.skill_servers.push_back(up);
  const bool prefix = up->config().prefix;
  for (const auto& k : listing.skills.GetArray()) {
    std::string uri(json::get_string(k, "uri").value_or(""));
    json::Document entry = json::clone(k);
    if (prefix) mcp::expose_skill_entry(up->name(), entry, entry.GetAllocator());
    std::string exposed(json::get_string(entry, "uri").value_or(""));
    if (snap.skill_index.count(exposed)) {
      snap.warnings.push_back("skill " + exposed + " of server " + up->name() + " is also given by server " +
                              snap.skills[snap.skill_index[exposed]].origin->name() + "; keeping the first");
      continue;
    }
    snap.skill_index.emplace(exposed, snap.skills.size());
    snap.raw_skill_index[uri].push_back(snap.skills.size());
    snap.skills.push_back({exposed, up, uri, json::write(entry)});
  }
}

/// Adds what `listing`'s server declares under capabilities.extensions to
/// `out`, the gateway's own: an extension any upstream offers is offered,
/// settings merged (a `true` flag from any server stays true). A server
/// whose tools open views offers MCP Apps even without declaring it.
void add_extensions(const upstream::Listing& listing, json::Document& out) {
  auto& a = out.GetAllocator();
  if (listing.extensions.IsObject())
    for (const auto& e : listing.extensions.GetObject()) {
      if (!e.value.IsObject()) continue;
      std::string_view id(e.name.GetString(), e.name.GetStringLength());
      json::Value* have = json::find(out, id);
      if (!have) {
        out.AddMember(json::str(id, a), json::Value(rapidjson::kObjectType), a);
        have = json::find(out, id);
      }
      for (const auto& setting : e.value.GetObject()) {
        std::string_view key(setting.name.GetString(), setting.name.GetStringLength());
        const json::Value* old = json::find(*have, key);
        if (!old || (setting.value.IsTrue() && !old->IsTrue())) json::set(*have, key, json::copy(setting.value, a), a);
      }
    }
  if (json::find(out, mcp::kUiExtension)) return;
  for (const auto& t : listing.tools.GetArray()) {
    const json::Value* meta = json::find(t, "_meta");
    if (meta && (json::find(*meta, "ui") || json::find(*meta, "ui/resourceUri"))) {
      json::Value settings(rapidjson::kObjectType);
      json::Value types(rapidjson::kArrayType);
      types.PushBack(json::ref(mcp::kAppMimeType), a);
      settings.AddMember("mimeTypes", types, a);
      out.AddMember(json::ref(mcp::kUiExtension), settings, a);
      return;
    }
  }
}

/// Picks each mode's welcome tool per welcome.strategy (seed 001: one per
/// session; which one is ours to decide, so it is configurable).
void select_welcome(const config::Config& cfg, const std::vector<std::shared_ptr<upstream::Upstream>>& upstreams,
                    Snapshot& snap) {
  using Strategy = config::Welcome::Strategy;
  const auto& w = cfg.welcome;
  snap.welcome_by_mode.assign(snap.modes.size(), std::nullopt);
  snap.welcome_reason.assign(snap.modes.size(), "");
  std::optional<std::size_t> named;
  if (w.strategy == Strategy::Tool) {
    if (auto it = snap.tool_index.find(w.tool); it != snap.tool_index.end()) {
      named = it->second;
    } else {
      // Unknown while an upstream is down is not yet a configuration error.
      bool all_up = std::all_of(upstreams.begin(), upstreams.end(), [](const auto& u) { return u->ready(); });
      (all_up ? snap.errors : snap.warnings)
          .push_back("welcome.tool \"" + w.tool + "\" is not a tool of the catalog (unknown, or filtered out)");
    }
  }
  for (std::size_t m = 0; m < snap.modes.size(); ++m) {
    std::string& why = snap.welcome_reason[m];
    switch (w.strategy) {
      case Strategy::None:
        why = "welcome.strategy is none";
        continue;
      case Strategy::Tool:
        if (named && snap.tools[*named].in_mode[m]) {
          snap.welcome_by_mode[m] = named;
          why = "named by welcome.tool";
        } else {
          why = named ? "welcome.tool is hidden in this mode" : "welcome.tool is not in the catalog";
        }
        continue;
      case Strategy::First:
      case Strategy::Priority: {
        std::optional<std::size_t> best;
        int best_priority = 0;
        for (std::size_t i = 0; i < snap.tools.size(); ++i) {
          const auto& t = snap.tools[i];
          if (!t.welcome || !t.in_mode[m]) continue;
          int p = t.origin->welcome_priority();
          // Tools are in config order (plugins, then servers): keeping the
          // first on ties is the "ties by config order" rule.
          if (!best || (w.strategy == Strategy::Priority && p > best_priority)) {
            best = i;
            best_priority = p;
          }
        }
        snap.welcome_by_mode[m] = best;
        if (!best) {
          why = "no visible tool is flagged _meta.welcomeTool";
          continue;
        }
        const auto& t = snap.tools[*best];
        std::string origin = (t.composite ? "plugin " : "server ") + t.origin->name();
        if (w.strategy == Strategy::First)
          why = "first flagged tool in server order (" + origin + ")";
        else
          why = "highest welcome_priority (" + std::to_string(best_priority) + ", " + origin + ")";
      }
    }
  }
}

}  // namespace

std::optional<std::size_t> Snapshot::mode_index(std::string_view mode) const {
  for (std::size_t i = 0; i < modes.size(); ++i)
    if (modes[i] == mode) return i;
  return std::nullopt;
}

const ExposedTool* Snapshot::find_tool(std::string_view name, std::size_t mode) const {
  auto it = tool_index.find(std::string(name));
  if (it == tool_index.end()) return nullptr;
  const ExposedTool& t = tools[it->second];
  return mode < t.in_mode.size() && t.in_mode[mode] ? &t : nullptr;
}

std::optional<Route> Snapshot::route_prompt(std::string_view name) const {
  auto it = prompt_index.find(std::string(name));
  if (it == prompt_index.end()) return std::nullopt;
  return Route{prompts[it->second].origin, prompts[it->second].upstream_key};
}

std::optional<Route> Snapshot::route_resource(std::string_view uri) const {
  if (auto it = resource_index.find(std::string(uri)); it != resource_index.end())
    return Route{resources[it->second].origin, resources[it->second].upstream_key};
  if (auto split = mcp::split_exposed_uri(uri)) {
    if (auto s = servers.find(std::string(split->server)); s != servers.end())
      return Route{s->second, std::move(split->uri)};
  }
  if (auto it = raw_resource_index.find(std::string(uri)); it != raw_resource_index.end() && it->second.size() == 1)
    return Route{resources[it->second[0]].origin, resources[it->second[0]].upstream_key};
  // A URI made from a template of a server without prefix reaches that
  // server as is.
  for (const auto& t : templates)
    if (t.key == t.upstream_key && template_matches(t.key, uri)) return Route{t.origin, std::string(uri)};
  return std::nullopt;
}

std::string Snapshot::unroutable_reason(std::string_view uri) const {
  if (auto it = raw_resource_index.find(std::string(uri)); it != raw_resource_index.end() && it->second.size() > 1) {
    std::string names;
    for (std::size_t i : it->second) names += (names.empty() ? "" : ", ") + resources[i].key;
    return "Resource " + std::string(uri) + " is ambiguous: several servers list it; read one of " + names;
  }
  if (mcp::keeps_scheme(uri)) {
    if (auto split = mcp::split_exposed_uri(uri); split && !servers.count(std::string(split->server)))
      return "Resource not found: " + std::string(uri) + " (no server is named \"" + std::string(split->server) +
             "\"; a server's " + std::string(uri.substr(0, uri.find(':'))) + ":// resources are exposed as " +
             std::string(uri.substr(0, uri.find(':'))) + "://<server>/<path>)";
  }
  return "Resource not found: " + std::string(uri);
}

std::optional<Route> Snapshot::route_skill(std::string_view uri) const {
  if (auto it = skill_index.find(std::string(uri)); it != skill_index.end())
    return Route{skills[it->second].origin, skills[it->second].upstream_key};
  if (auto split = mcp::split_exposed_uri(uri)) {
    if (auto s = servers.find(std::string(split->server)); s != servers.end())
      return Route{s->second, std::move(split->uri)};
  }
  if (auto it = raw_skill_index.find(std::string(uri)); it != raw_skill_index.end() && it->second.size() == 1)
    return Route{skills[it->second[0]].origin, skills[it->second[0]].upstream_key};
  if (skill_servers.size() == 1 && !skill_servers[0]->config().prefix) return Route{skill_servers[0], std::string(uri)};
  return std::nullopt;
}

std::optional<Route> Snapshot::route_template(std::string_view uri_template) const {
  auto it = template_index.find(std::string(uri_template));
  if (it == template_index.end()) return std::nullopt;
  return Route{templates[it->second].origin, templates[it->second].upstream_key};
}

std::string Snapshot::expose_uri(const upstream::Upstream& server, std::string_view uri) const {
  if (!server.config().prefix) return std::string(uri);
  return mcp::expose_uri(server.name(), uri);
}

namespace {

/// Adds tools to a snapshot under construction, refusing a second tool of
/// an exposed name.
class ToolAdder {
 public:
  ToolAdder(const config::Config& cfg, Snapshot& snap, IntegrityPass& integrity)
      : cfg_(cfg), snap_(snap), integrity_(integrity) {}

  /// Adds `def` (a Tool object) of `origin` as `full` (before shortening)
  /// if it passes `filters`. `server_filters`: the filters are the
  /// server's own, written against its tool names too. `who` names the
  /// origin in messages.
  void add(const std::shared_ptr<upstream::ToolOrigin>& origin, bool composite, const json::Value& def,
           const std::string& uname, const std::string& full, const config::Filters& filters, bool server_filters,
           std::vector<std::string> slices, const std::string* description, const std::string& who,
           std::string_view ref_server = {}, std::shared_ptr<const ArgumentMap> argument_map = nullptr) {
    std::string name = shorten(full, cfg_.naming.max_length);
    integrity_.strip_name(name);
    // Filters are written with full names: a shortened one's hash suffix
    // cannot be known when writing the file.
    if (!passes(filters, full, server_filters ? uname : std::string_view{}, slices)) return;
    if (auto prev = seen_.find(name); prev != seen_.end()) {
      const auto& [first, first_composite] = prev->second;
      if (first_composite)
        snap_.warnings.push_back("tool \"" + name + "\" of " + who + " is left out: " + first +
                                 " already declares a tool of that name");
      else
        snap_.errors.push_back("exposed tool name \"" + name + "\" is given by both " + first + " and " + who +
                               "; keep prefix: true on one of them, or exclude one with filters");
      return;
    }
    seen_.emplace(name, std::make_pair(who, composite));

    ExposedTool e;
    e.name = name;
    e.origin = origin;
    e.composite = composite;
    e.upstream_name = uname;
    e.argument_map = std::move(argument_map);
    e.task_support = mcp::task_support(def);
    e.gateway_task = cfg_.tasks.gateway && e.task_support == mcp::TaskSupport::Forbidden;
    json::Document d = tool_definition(def, name, description, ref_server, cfg_.chain.resolve, e.gateway_task);
    // The definition is final here: what integrity strips and judges is
    // what clients are shown.
    if (!integrity_.admit(composite ? std::string() : origin->name(), uname, name, d, d.GetAllocator())) return;
    e.definition = json::write(d);
    e.slices = std::move(slices);
    if (const auto* a = json::find(def, "annotations"); a && a->IsObject() && !cfg_.policies.empty())
      e.annotations = std::make_shared<const json::Document>(json::clone(*a));
    if (const auto* meta = json::find(def, "_meta")) {
      const auto* w = json::find(*meta, "welcomeTool");
      if (w && w->IsTrue() && welcome_seen_[origin.get()]++ == 0) e.welcome = true;
      else if (w && w->IsTrue())
        snap_.warnings.push_back((composite ? "plugin " : "server ") + origin->name() +
                                 " flags more than one welcome tool; using the first, ignoring " + uname);
    }
    e.in_mode.push_back(true);
    for (const auto& m : cfg_.modes)
      e.in_mode.push_back(passes(m.filters, full, {}, e.slices) || (full != name && passes(m.filters, name, {}, e.slices)));
    if (!composite) snap_.upstream_tool_index[uname].push_back(snap_.tools.size());
    snap_.tool_index.emplace(name, snap_.tools.size());
    snap_.tools.push_back(std::move(e));
    documents_.push_back(document_of(d, name));
  }

  /// What the search index holds of each added tool, in `tools` order.
  std::vector<search::Document> take_documents() { return std::move(documents_); }

 private:
  const config::Config& cfg_;
  Snapshot& snap_;
  IntegrityPass& integrity_;
  std::unordered_map<std::string, std::pair<std::string, bool>> seen_;  // exposed name -> (who, composite)
  std::unordered_map<const upstream::ToolOrigin*, int> welcome_seen_;
  std::vector<search::Document> documents_;
};

/// Marks the search modes and hides from them the tools exposed under a
/// meta tool's name (the meta tool takes precedence there).
void apply_discovery(const config::Config& cfg, Snapshot& snap) {
  snap.search_modes.assign(snap.modes.size(), cfg.discovery == config::Discovery::Search);
  for (std::size_t m = 0; m < cfg.modes.size(); ++m)
    if (cfg.modes[m].discovery) snap.search_modes[m + 1] = *cfg.modes[m].discovery == config::Discovery::Search;
  if (std::none_of(snap.search_modes.begin(), snap.search_modes.end(), [](bool b) { return b; })) return;
  for (auto& t : snap.tools) {
    if (!is_meta_tool(t.name)) continue;
    std::vector<std::string> hidden;
    for (std::size_t m = 0; m < snap.modes.size(); ++m)
      if (snap.search_modes[m] && t.in_mode[m]) {
        t.in_mode[m] = false;
        hidden.push_back(snap.modes[m]);
      }
    std::string modes;
    for (const auto& h : hidden) modes += (modes.empty() ? "" : ", ") + h;
    if (!hidden.empty())
      snap.warnings.push_back("tool \"" + t.name + "\" of " + (t.composite ? "plugin " : "server ") + t.origin->name() +
                              " is hidden in search modes (" + modes + "): " + t.name +
                              " is the gateway's meta tool there; expose it under another name (prefix: true) to reach it");
  }
}

/// The prompts `up` lists, under their exposed names; the first server
/// to give a name keeps it.
void add_prompts(const config::Config& cfg, const std::shared_ptr<upstream::Upstream>& up,
                 const upstream::Listing& listing, Snapshot& snap, IntegrityPass& integrity) {
  const auto& sc = up->config();
  for (const auto& p : listing.prompts.GetArray()) {
    std::string uname(json::get_string(p, "name").value_or(""));
    std::string name = exposed_name(cfg.naming, sc.name, uname, sc.prefix);
    integrity.strip_name(name);
    if (snap.prompt_index.count(name)) {
      snap.warnings.push_back("prompt \"" + name + "\" of server " + sc.name + " is also given by server " +
                              snap.prompts[snap.prompt_index[name]].origin->name() + "; keeping the first");
      continue;
    }
    std::string desc = exposed_description(cfg.naming, sc.name, json::get_string(p, "description").value_or(""));
    snap.prompt_index.emplace(name, snap.prompts.size());
    snap.prompts.push_back({name, up, uname, patched(p, "name", name, integrity, "prompt " + name, &desc)});
  }
}

/// The resources and resource templates `up` lists, under their exposed URIs.
void add_resources(const std::shared_ptr<upstream::Upstream>& up, const upstream::Listing& listing, Snapshot& snap,
                   IntegrityPass& integrity) {
  const std::string& server = up->config().name;
  for (const auto& r : listing.resources.GetArray()) {
    std::string uri(json::get_string(r, "uri").value_or(""));
    std::string exposed = snap.expose_uri(*up, uri);
    if (snap.resource_index.count(exposed)) {
      snap.warnings.push_back("resource " + exposed + " of server " + server + " is also given by server " +
                              snap.resources[snap.resource_index[exposed]].origin->name() + "; keeping the first");
      continue;
    }
    std::size_t i = snap.resources.size();
    snap.resource_index.emplace(exposed, i);
    // A raw URI listed by two servers is ambiguous: route it by neither.
    auto& listed_by = snap.raw_resource_index[uri];
    if (listed_by.empty() || snap.resources[listed_by[0]].origin != up) listed_by.push_back(i);
    snap.resources.push_back({exposed, up, uri, patched(r, "uri", exposed, integrity, "resource " + exposed)});
  }
  for (const auto& t : listing.resource_templates.GetArray()) {
    std::string tmpl(json::get_string(t, "uriTemplate").value_or(""));
    std::string exposed = snap.expose_uri(*up, tmpl);
    if (snap.template_index.count(exposed)) continue;
    snap.template_index.emplace(exposed, snap.templates.size());
    snap.templates.push_back({exposed, up, tmpl, patched(t, "uriTemplate", exposed, integrity, "resource template " + exposed)});
  }
}

}  // namespace

std::shared_ptr<const Snapshot> build(const config::Config& cfg,
                                      const std::vector<std::shared_ptr<upstream::Upstream>>& upstreams,
                                      const std::vector<std::shared_ptr<plugin::Plugin>>& plugins,
                                      std::uint64_t generation, const IntegrityInput& integrity_input) {
  auto snap = std::make_shared<Snapshot>();
  snap->generation = generation;
  for (const auto& m : cfg.modes) snap->modes.push_back(m.name);
  IntegrityPass integrity(integrity_input, cfg.naming, upstreams);
  ToolAdder tools(cfg, *snap, integrity);
  json::Document extensions(rapidjson::kObjectType);

  // Composite tools keep the names their plugin gives them (no prefix, no
  // description prefix) and obey the global filters and the modes.
  for (const auto& p : plugins)
    for (const auto& t : p->tools().GetArray()) {
      std::string uname(json::get_string(t, "name").value_or(""));
      tools.add(p, true, t, uname, uname, cfg.filters, false, slices_of(nullptr, uname, t), nullptr,
                "plugin " + p->name() + " (" + p->config().path + ")");
    }

  for (const auto& up : upstreams) {
    const auto& sc = up->config();
    auto listing = up->listing();
    if (!up->settled())
      snap->pending.push_back({up, sc.prefix ? sc.name + cfg.naming.separator : "",
                               up->started_at() + std::chrono::milliseconds(cfg.startup_wait_ms)});
    if (sc.prefix) snap->servers.emplace(sc.name, up);
    const config::Filters& filters = sc.filters ? *sc.filters : cfg.filters;

    if (sc.proxy_tools) {
      // The overridden definition is the exposed one from here on (lists,
      // search, check, pins); slices still match the upstream's names.
      ServerOverrides overrides(sc.tools, "server " + sc.name);
      if (up->ready()) overrides.warn_unknown(listing->tools, snap->warnings);
      for (const auto& t : listing->tools.GetArray()) {
        std::string uname(json::get_string(t, "name").value_or(""));
        Overridden o = overrides.apply(t, uname, snap->warnings);
        const json::Value& def = o.definition();
        std::string desc = exposed_description(cfg.naming, sc.name, json::get_string(def, "description").value_or(""));
        tools.add(up, false, def, uname, exposed_name(cfg.naming, sc.name, o.name, sc.prefix), filters,
                  sc.filters.has_value(), slices_of(&sc, uname, t), &desc, "server " + sc.name + " (" + uname + ")",
                  sc.prefix ? std::string_view(sc.name) : std::string_view(), std::move(o.arguments));
      }
    }

    add_prompts(cfg, up, *listing, *snap, integrity);
    add_resources(up, *listing, *snap, integrity);
    add_skills(up, *listing, *snap);
    snap->resources_subscribable |= listing->can_subscribe;
    add_extensions(*listing, extensions);
    snap->tasks |= listing->has_tasks;
  }
  // Tasks are declared by era (capabilities.tasks or the extension), never
  // both: the session's era decides.
  extensions.RemoveMember(json::str(mcp::kTasksExtension, extensions.GetAllocator()));
  snap->tasks |= cfg.tasks.gateway;
  snap->extensions = json::write(extensions);

  snap->integrity = integrity.take();
  apply_discovery(cfg, *snap);
  snap->index = std::make_shared<const search::Index>(tools.take_documents());
  snap->mode_tools.resize(snap->modes.size());
  for (std::size_t i = 0; i < snap->tools.size(); ++i)
    for (std::size_t m = 0; m < snap->modes.size(); ++m)
      if (snap->tools[i].in_mode[m]) snap->mode_tools[m].push_back(i);
  select_welcome(cfg, upstreams, *snap);
  return snap;
}

std::vector<std::string> name_warnings(const Snapshot& s) {
  std::vector<std::string> out;
  const std::string* not_mcp = nullptr;
  const std::string* not_strict = nullptr;
  std::size_t n_mcp = 0, n_strict = 0;
  for (const auto& t : s.tools) {
    if (!mcp_recommended_name(t.name) && n_mcp++ == 0) not_mcp = &t.name;
    if (!strict_client_name(t.name) && n_strict++ == 0) not_strict = &t.name;
  }
  if (n_mcp)
    out.push_back(std::to_string(n_mcp) + " exposed tool names (e.g. \"" + *not_mcp +
                  "\") are outside the MCP recommendation [A-Za-z0-9_.-]{1,128}; "
                  "set naming.separator: \"__\" (and naming.max_length: 64)");
  if (n_strict)
    out.push_back(std::to_string(n_strict) + " exposed tool names (e.g. \"" + *not_strict +
                  "\") are outside [A-Za-z0-9_-]{1,64}, which several popular clients enforce; "
                  "set naming.separator: \"__\" and naming.max_length: 64");
  return out;
}

std::shared_ptr<const Snapshot> Catalog::snapshot() const {
  util::MutexLock lk(mu_);
  return current_;
}

void Catalog::publish(std::shared_ptr<const Snapshot> s) {
  {
    // After the swap: a request that reads `starting_until_` cleared takes
    // a snapshot that has the server.
    const auto until = s->pending.empty() ? 0 : s->starting_until().time_since_epoch().count();
    util::MutexLock lk(mu_);
    current_ = std::move(s);
    starting_until_.store(until, std::memory_order_release);
  }
  published_.notify();
}

Task<bool> Catalog::wait_newer(std::uint64_t seen, std::chrono::steady_clock::time_point deadline,
                               CancelSignal* cancel) {
  for (;;) {
    const auto at = published_.generation();
    if (snapshot()->generation > seen) co_return true;
    if (cancel && cancel->cancelled()) co_return false;
    if (!co_await published_.wait(at, deadline, cancel)) co_return false;
  }
}

std::vector<std::shared_ptr<upstream::Upstream>> Snapshot::pending_for(std::string_view name) const {
  std::vector<std::shared_ptr<upstream::Upstream>> out;
  for (const auto& p : pending)
    if (name.substr(0, p.prefix.size()) == p.prefix) out.push_back(p.server);
  return out;
}

}  // namespace mcpgw::catalog
