#pragma once
// The set of tools, prompts and resources clients see: immutable snapshots
// built from every upstream's listing and the configuration (names, slices,
// filters, modes), swapped atomically when anything changes.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "catalog/overrides.hpp"
#include "catalog/integrity_pass.hpp"
#include "config/config.hpp"
#include "mcp/tasks.hpp"
#include "plugin/plugin.hpp"
#include "search/index.hpp"
#include "upstream/upstream.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::catalog {

/// One tool as exposed to clients.
struct ExposedTool {
  std::string name;                          ///< as clients see and call it
  std::shared_ptr<upstream::ToolOrigin> origin;  ///< an upstream server or a plugin
  bool composite = false;                    ///< origin is a plugin
  std::string upstream_name;                 ///< the name the origin knows
  /// How a call's arguments go back to the origin's (servers[].tools);
  /// null: as they are.
  std::shared_ptr<const ArgumentMap> argument_map;
  std::string definition;                    ///< serialised Tool, as listed
  std::vector<std::string> slices;
  bool welcome = false;                      ///< `_meta.welcomeTool: true`
  std::vector<bool> in_mode;                 ///< by Snapshot::modes index
  /// How the origin runs it as a task (its `execution.taskSupport`).
  mcp::TaskSupport task_support = mcp::TaskSupport::Forbidden;
  /// The gateway runs it as a task (`tasks.gateway`, the origin does not):
  /// listed with `taskSupport: "optional"`.
  bool gateway_task = false;
  /// The definition's `annotations` object, for policies (set only when
  /// some are configured; null: none).
  std::shared_ptr<const json::Document> annotations;
};

/// A prompt, resource or resource template as exposed to clients.
struct ExposedEntry {
  std::string key;                           ///< name, uri or uriTemplate as exposed
  std::shared_ptr<upstream::Upstream> origin;
  std::string upstream_key;                  ///< the same as the origin knows it
  std::string definition;                    ///< serialised, as listed
};

/// Where a client-side resource URI or prompt name goes.
struct Route {
  std::shared_ptr<upstream::Upstream> origin;
  std::string upstream_key;
};

/// A server whose first connection attempt had not ended when a snapshot
/// was built: its tools may be missing from it yet.
struct Pending {
  std::shared_ptr<upstream::Upstream> server;
  std::string prefix;  ///< what its exposed names start with; "" = any name (prefix: false)
  /// Until when requests wait for it (its start plus startup_wait_ms):
  /// past that it is left out of answers until it connects.
  std::chrono::steady_clock::time_point until;
};

/// A consistent view of the catalog; never changes once published.
struct Snapshot {
  std::uint64_t generation = 0;
  /// "all" first, then the configured modes in file order.
  std::vector<std::string> modes{"all"};
  std::vector<ExposedTool> tools;            ///< every tool that passes the filters
  std::vector<Pending> pending;              ///< servers still connecting for the first time
  std::vector<std::vector<std::size_t>> mode_tools;  ///< visible tools per mode
  std::vector<ExposedEntry> prompts, resources, templates;
  /// Skill entries (SEP-2640) of every upstream that offers Skills: key the
  /// exposed SKILL.md URI, definition the entry with its URIs exposed.
  std::vector<ExposedEntry> skills;
  /// The welcome tool of each mode (index into `tools`), and why it was
  /// chosen or why there is none.
  std::vector<std::optional<std::size_t>> welcome_by_mode;
  std::vector<std::string> welcome_reason;
  /// Problems that make a configuration invalid (name collisions).
  std::vector<std::string> errors;
  /// Everything else worth telling the operator.
  std::vector<std::string> warnings;

  /// Index of `mode` in `modes`, or nullopt.
  std::optional<std::size_t> mode_index(std::string_view mode) const;
  /// The tool `name` if it exists and is visible in mode `mode`.
  const ExposedTool* find_tool(std::string_view name, std::size_t mode) const;
  /// The servers of `pending` that may list a tool or prompt exposed as `name`.
  std::vector<std::shared_ptr<upstream::Upstream>> pending_for(std::string_view name) const;
  /// The latest `until` of `pending` (catalog/startup.cpp): before it, a
  /// request that needs the whole catalog waits; the epoch when none.
  std::chrono::steady_clock::time_point starting_until() const;
  /// When a request for `name` stops waiting for the servers that may list
  /// it: the latest `until` of pending_for(name).
  std::chrono::steady_clock::time_point starting_until(std::string_view name) const;
  /// The names of the servers of `pending`, comma-separated (for the log).
  std::string pending_names() const;
  /// The upstream and upstream name of exposed prompt `name`.
  std::optional<Route> route_prompt(std::string_view name) const;
  /// The upstream and upstream URI of a resource URI a client sends: an
  /// exposed URI, `<server>+<uri>`, an upstream URI listed by exactly one
  /// server, or one matching a resource template.
  std::optional<Route> route_resource(std::string_view uri) const;
  /// Why `uri` has no route, for the client: ambiguous (naming the exposed
  /// URIs to read instead), a `ui://`/`skill://` URI naming no server, or
  /// simply not found.
  std::string unroutable_reason(std::string_view uri) const;
  /// Exposed URI for upstream URI `uri` of `server` (for notifications).
  std::string expose_uri(const upstream::Upstream& server, std::string_view uri) const;
  /// The upstream and upstream URI of a skill URI a client sends (a
  /// SKILL.md or a directory): its exposed form, a raw SKILL.md URI one
  /// server lists, or any URI when one server alone offers Skills.
  std::optional<Route> route_skill(std::string_view uri) const;
  /// The upstream and upstream template of an exposed uriTemplate.
  std::optional<Route> route_template(std::string_view uri_template) const;

  std::unordered_map<std::string, std::size_t> tool_index, prompt_index, resource_index, template_index, skill_index;
  /// Raw SKILL.md URI -> the skills listing it, one per server.
  std::unordered_map<std::string, std::vector<std::size_t>> raw_skill_index;
  /// The upstreams that offer Skills, in config order.
  std::vector<std::shared_ptr<upstream::Upstream>> skill_servers;
  /// Upstream tool name -> the servers' tools of that name (a view calls
  /// its server's tools by these names).
  std::unordered_map<std::string, std::vector<std::size_t>> upstream_tool_index;
  /// Upstream URI -> the resources listing it, one per server (routed only
  /// when one server lists it).
  std::unordered_map<std::string, std::vector<std::size_t>> raw_resource_index;
  std::unordered_map<std::string, std::shared_ptr<upstream::Upstream>> servers;  ///< prefixed servers by name
  bool resources_subscribable = false;
  /// The gateway's `capabilities.extensions`: what its upstreams offer
  /// (serialised object), tasks aside (see `tasks`).
  std::string extensions = "{}";
  /// The gateway offers tasks: it makes them (tasks.gateway) or an
  /// upstream runs some. Declared in each era's own form.
  bool tasks = false;
  /// By `modes` index: the mode has `discovery: search` (its tools/list is
  /// the meta tools of catalog/tool_search.hpp).
  std::vector<bool> search_modes;
  /// The search index over `tools` (document i is tools[i]), built with the
  /// snapshot so that a new listing is searchable as soon as it is published.
  std::shared_ptr<const search::Index> index;
  /// What integrity decided (integrity.pins, strip_invisible): the tools
  /// withheld from `tools`, the reports, the records for the pins.
  IntegrityView integrity;
};

/// Builds a snapshot from the plugins' tools and the upstreams' current
/// listings, in config order. Plugin tools come first and keep their names:
/// an upstream tool of the same exposed name is left out with a warning
/// (upstreams come and go; the configured composites stay).
std::shared_ptr<const Snapshot> build(const config::Config& cfg,
                                      const std::vector<std::shared_ptr<upstream::Upstream>>& upstreams,
                                      const std::vector<std::shared_ptr<plugin::Plugin>>& plugins,
                                      std::uint64_t generation, const IntegrityInput& integrity = {});

/// Warnings about exposed tool names that clients may reject, one per kind.
std::vector<std::string> name_warnings(const Snapshot& s);

/// Holds the current snapshot. Readers take a shared_ptr and keep it for the
/// whole request; publishing never blocks them for long.
class Catalog {
 public:
  std::shared_ptr<const Snapshot> snapshot() const;
  void publish(std::shared_ptr<const Snapshot> s);
  std::uint64_t next_generation() { return ++generation_; }
  /// Waits until a snapshot newer than generation `seen` is published, or
  /// `deadline`, or `cancel` (may be null); false at the deadline. Run on a strand.
  Task<bool> wait_newer(std::uint64_t seen, std::chrono::steady_clock::time_point deadline, CancelSignal* cancel);
  /// True while a server of the current snapshot is in its first connection
  /// attempt within its start-up bound (catalog/startup.cpp). Cheap: one
  /// atomic load (and a clock read while true), for every request.
  bool starting() const;
  /// The snapshot once no server is in its first attempt within its bound,
  /// or at `deadline`, or on `cancel` (may be null): what a request that
  /// needs the whole catalog (initialize, a list, a search) answers from.
  Task<std::shared_ptr<const Snapshot>> started(std::chrono::steady_clock::time_point deadline, CancelSignal* cancel);

 private:
  mutable util::Mutex mu_;
  Event published_;  // has a lock of its own
  std::shared_ptr<const Snapshot> current_ GUARDED_BY(mu_) = std::make_shared<Snapshot>();
  std::atomic<std::uint64_t> generation_{0};  // atomic: no lock
  /// The current snapshot's starting_until(), in clock ticks; 0 when it has
  /// nothing pending. Atomic: read by every request without the lock.
  std::atomic<std::chrono::steady_clock::rep> starting_until_{0};
};

}  // namespace mcpgw::catalog
