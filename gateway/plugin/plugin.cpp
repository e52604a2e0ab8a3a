#include "plugin/plugin.hpp"

#include <dlfcn.h>
#include <mcpgw/plugin.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <set>

#include <boost/asio/strand.hpp>

#include "mcp/protocol.hpp"
#include "util/offload.hpp"
#include "util/thread_annotations.hpp"

// The C ABI's opaque types, defined at global scope where plugin.h declares
// them.

/// Per plugin: what its host functions act on.
struct mcpgw_host_state {
  const mcpgw::plugin::Plugin* plugin;
};

/// One running call of a plugin tool. Lives on the stack of
/// Plugin::call_tool, which waits for its asynchronous calls before
/// returning.
struct mcpgw_call {
  const mcpgw::plugin::Plugin* plugin;
  const mcpgw::upstream::CallOptions* opts;
  mcpgw::util::Mutex mu;
  std::condition_variable idle;
  int outstanding GUARDED_BY(mu) = 0;
  /// The client's answers so far and the state of the last round, as JSON
  /// (set before the call starts, then only read).
  std::string input_responses = "{}";
  std::string input_state = "null";
};

namespace mcpgw::plugin {
namespace {

char* alloc_string(const char* data, std::size_t size) {
  auto* s = static_cast<char*>(std::malloc(size + 1));
  if (!s) return nullptr;
  if (size) std::memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

char* alloc_string(std::string_view s) { return alloc_string(s.data(), s.size()); }

void free_string(char* s) { std::free(s); }

struct Freed {
  void operator()(char* s) const { free_string(s); }
};
using OwnedString = std::unique_ptr<char, Freed>;

/// The call a plugin asked for, run to the end; the CallToolResult as JSON.
std::string run_upstream_call(const mcpgw_call& call, const char* server, const char* tool, const char* arguments) {
  auto fail = [](const std::string& why) { return json::write(mcp::tool_error(why)); };
  if (!server || !tool) return fail("call_tool needs a server and a tool name");
  auto up = call.plugin->host().find(server);
  if (!up) return fail("unknown server \"" + std::string(server) + "\" (not in gateway.yaml)");
  std::optional<json::Document> args;
  if (arguments) {
    auto parsed = json::parse(arguments);
    if (!parsed || !parsed->IsObject())
      return fail("arguments for " + std::string(server) + "/" + tool + " must be a JSON object");
    args = std::move(*parsed);
  }
  if (call.opts->vet_upstream_call)
    if (auto refused = call.opts->vet_upstream_call(up->name(), tool, args ? &*args : nullptr))
      return json::write(refused->body);
  upstream::CallOptions o;
  o.deadline = std::min(call.opts->deadline, up->deadline());
  o.cancel = call.opts->cancel;
  o.caller = call.opts->caller;
  // The client's progress token and its way back cover the plugin's own
  // upstream calls: their progress and requests reach the client.
  o.on_progress = call.opts->on_progress;
  o.client = call.opts->client;
  o.trace = call.opts->trace;
  o.spans = call.opts->spans;
  auto started = std::chrono::steady_clock::now();
  // Only this pool thread waits: the call itself runs on the loop.
  upstream::Reply r = block_on(asio::make_strand(call.plugin->host().io()),
                               up->call_tool(tool, args ? &*args : nullptr, nullptr, o), [] {
                                 return upstream::Reply{false, mcp::tool_error("mcpgw is shutting down")};
                               });
  if (call.opts->on_upstream_call) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    call.opts->on_upstream_call(upstream::UpstreamCall{up->name(), tool, args ? &*args : nullptr, up->has_tool(tool),
                                                       upstream::outcome_of(r, o), ms});
  }
  if (r.rpc_error) return fail("server " + up->name() + ": " + jsonrpc::describe_error(r.body));
  return json::write(r.body);
}

void host_log(const mcpgw_host* host, mcpgw_log_level level, const char* message) {
  if (host && host->state && message) host->state->plugin->log(static_cast<int>(level), message);
}

char* host_call_tool(mcpgw_call* call, const char* server, const char* tool, const char* arguments) {
  return alloc_string(run_upstream_call(*call, server, tool, arguments));
}

void host_call_tool_async(mcpgw_call* call, const char* server, const char* tool, const char* arguments,
                          mcpgw_tool_done done, void* user_data) {
  if (!done) return;
  // The borrowed strings die when this returns: the task keeps copies.
  auto copy = [](const char* s) { return s ? std::optional<std::string>(s) : std::nullopt; };
  auto task = [call, done, user_data, s = copy(server), t = copy(tool), a = copy(arguments)] {
    std::string result = run_upstream_call(*call, s ? s->c_str() : nullptr, t ? t->c_str() : nullptr,
                                           a ? a->c_str() : nullptr);
    done(user_data, alloc_string(result));
    util::MutexLock lk(call->mu);
    if (--call->outstanding == 0) call->idle.notify_all();
  };
  {
    util::MutexLock lk(call->mu);
    ++call->outstanding;
  }
  if (!call->plugin->host().submit(task)) {
    {
      util::MutexLock lk(call->mu);
      --call->outstanding;
    }
    done(user_data, alloc_string(json::write(mcp::tool_error("mcpgw is shutting down"))));
  }
}

const char* host_principal(const mcpgw_call* call) {
  return call->opts->caller ? call->opts->caller->principal.c_str() : "";
}

const char* host_mode(const mcpgw_call* call) {
  return call->opts->caller && !call->opts->caller->mode.empty() ? call->opts->caller->mode.c_str() : "all";
}

int host_cancelled(const mcpgw_call* call) { return call->opts->cancel && call->opts->cancel->cancelled() ? 1 : 0; }

char* host_input_responses(const mcpgw_call* call) { return alloc_string(call->input_responses); }

char* host_input_state(const mcpgw_call* call) { return alloc_string(call->input_state); }

bool valid_plugin_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

/// Fields a v1 descriptor must have: everything up to `shutdown`.
constexpr std::size_t kDescriptorV1Size = offsetof(mcpgw_plugin, shutdown) + sizeof(mcpgw_plugin::shutdown);

}  // namespace

struct Plugin::Library {
  void* handle = nullptr;
  mcpgw_host_state state{};
  mcpgw_host host{};
  ~Library() {
    if (handle) dlclose(handle);
  }
};

Host::Host(UpstreamLookup lookup, asio::any_io_executor io) : lookup_(std::move(lookup)), io_(std::move(io)), pool_(0, 256) {}

Host::~Host() = default;

Plugin::Plugin(config::Plugin cfg, std::shared_ptr<Host> host)
    : cfg_(std::move(cfg)), host_(std::move(host)), lib_(std::make_unique<Library>()) {}

Plugin::~Plugin() {
  if (!initialized_) return;
  try {
    if (desc_->shutdown) desc_->shutdown(state_);
  } catch (...) {
    spdlog::error("plugin {}: shutdown threw an exception across the C ABI", name_);
  }
  if (loaded_) spdlog::info("plugin {} unloaded", name_);
}

namespace {

/// Opens the library at `path` into `handle` and checks the descriptor its
/// entry point gives (`where` names it in errors).
Result<const mcpgw_plugin*> open_descriptor(const std::string& path, const std::string& where, void*& handle) {
  dlerror();
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return Error{where + ": cannot load: " + (why ? why : "unknown dlopen error")};
  }
  dlerror();
  void* sym = dlsym(handle, MCPGW_PLUGIN_ENTRY);
  if (!sym)
    return Error{where + ": no entry point " MCPGW_PLUGIN_ENTRY
                         " (define it with MCPGW_PLUGIN from <mcpgw/plugin.hpp>, or export extern \"C\" "
                         "const mcpgw_plugin* " MCPGW_PLUGIN_ENTRY "(void))"};
  auto entry = reinterpret_cast<mcpgw_plugin_entry_v1>(sym);
  const mcpgw_plugin* d = entry();
  if (!d) return Error{where + ": " MCPGW_PLUGIN_ENTRY " returned no descriptor"};
  if (d->abi_version != MCPGW_PLUGIN_ABI_VERSION)
    return Error{where + ": built for plugin ABI version " + std::to_string(d->abi_version) +
                 ", this mcpgw speaks version " + std::to_string(MCPGW_PLUGIN_ABI_VERSION) +
                 "; rebuild it against this mcpgw's <mcpgw/plugin.h>"};
  if (d->struct_size < kDescriptorV1Size)
    return Error{where + ": descriptor is " + std::to_string(d->struct_size) + " bytes, ABI version 1 needs " +
                 std::to_string(kDescriptorV1Size)};
  if (!d->name || !valid_plugin_name(d->name))
    return Error{where + ": plugin name must match [A-Za-z0-9_.-]+, got " +
                 (d->name ? json::quote(d->name) : std::string("none"))};
  if (!d->init || !d->list_tools || !d->call)
    return Error{where + ": descriptor lacks " + std::string(!d->init ? "init" : !d->list_tools ? "list_tools" : "call")};
  return d;
}

/// Checks list_tools' answer: named tools, each once, with object schemas
/// (`who` names the plugin in errors).
Result<void> check_tools(const json::Value& tools, const std::string& who) {
  std::set<std::string> seen;
  std::size_t i = 0;
  for (const auto& t : tools.GetArray()) {
    const std::string at = who + ": tool " + std::to_string(i++);
    auto name = json::get_string(t, "name");
    if (!t.IsObject() || !name || name->empty()) return Error{at + " has no name"};
    const std::string tool = "\"" + std::string(*name) + "\"";
    if (!seen.insert(std::string(*name)).second) return Error{who + ": tool " + tool + " is declared twice"};
    const json::Value* schema = json::find(t, "inputSchema");
    if (!schema || !schema->IsObject() || json::get_string(*schema, "type") != "object")
      return Error{who + ": tool " + tool + ": inputSchema must be an object schema ({\"type\": \"object\", ...})"};
    if (const json::Value* out = json::find(t, "outputSchema"); out && !out->IsObject())
      return Error{who + ": tool " + tool + ": outputSchema must be an object"};
  }
  return {};
}

}  // namespace

Result<std::shared_ptr<Plugin>> Plugin::load(const config::Plugin& cfg, std::shared_ptr<Host> host) {
  // Not make_shared: the constructor is private to keep load() the only way in.
  std::shared_ptr<Plugin> p(new Plugin(cfg, std::move(host)));
  const std::string where = "plugin " + cfg.path;
  auto opened = open_descriptor(cfg.path, where, p->lib_->handle);
  if (!opened) return Error{opened.error()};
  const mcpgw_plugin* d = *opened;
  p->desc_ = d;
  p->name_ = d->name;
  p->version_ = d->version ? d->version : "";

  auto& lib = *p->lib_;
  lib.state.plugin = p.get();
  lib.host = mcpgw_host{sizeof(mcpgw_host),
                        MCPGW_PLUGIN_ABI_VERSION,
                        &lib.state,
                        [](const char* data, std::size_t size) { return alloc_string(data, size); },
                        &free_string,
                        &host_log,
                        &host_call_tool,
                        &host_call_tool_async,
                        &host_principal,
                        &host_mode,
                        &host_cancelled,
                        &host_input_responses,
                        &host_input_state};
  char* error = nullptr;
  void* state = nullptr;
  // Exceptions must not cross the C ABI; one that does anyway (a plugin not
  // built with plugin.hpp) is a failed init, not a dead daemon.
  try {
    state = d->init(&lib.host, cfg.config_json.c_str(), &error);
  } catch (...) {
    return Error{where + " (" + p->name_ + "): init threw an exception across the C ABI"};
  }
  if (error) {
    OwnedString owned(error);
    return Error{where + " (" + p->name_ + "): init failed: " + error};
  }
  p->state_ = state;
  p->initialized_ = true;

  OwnedString listed;
  try {
    listed.reset(d->list_tools(state));
  } catch (...) {
    return Error{where + " (" + p->name_ + "): list_tools threw an exception across the C ABI"};
  }
  if (!listed) return Error{where + " (" + p->name_ + "): list_tools returned nothing"};
  auto tools = json::parse(listed.get());
  if (!tools) return Error{where + " (" + p->name_ + "): list_tools returned invalid JSON: " + tools.error()};
  if (!tools->IsArray()) return Error{where + " (" + p->name_ + "): list_tools must return a JSON array of tools"};
  if (auto checked = check_tools(*tools, where + " (" + p->name_ + ")"); !checked) return Error{checked.error()};
  p->tools_ = std::move(*tools);
  p->loaded_ = true;
  spdlog::info("plugin {} {} loaded from {}: {} tools", p->name_, p->version_, cfg.path, p->tools_.Size());
  return p;
}

bool Plugin::has_tool(std::string_view tool) const {
  for (const auto& t : tools_.GetArray())
    if (json::get_string(t, "name") == tool) return true;
  return false;
}

void Plugin::log(int level, std::string_view message) const {
  switch (level) {
    case MCPGW_LOG_DEBUG: spdlog::debug("plugin {}: {}", name_, message); break;
    case MCPGW_LOG_INFO: spdlog::info("plugin {}: {}", name_, message); break;
    case MCPGW_LOG_WARN: spdlog::warn("plugin {}: {}", name_, message); break;
    default: spdlog::error("plugin {}: {}", name_, message); break;
  }
}

Task<upstream::Reply> Plugin::call_tool(std::string_view tool, const json::Value* arguments, const json::Value*,
                                        const upstream::CallOptions& opts) {
  if (!opts.trace) co_return co_await run_rounds(tool, arguments, opts);
  // The plugin's run is a span of its own, the parent of its upstream calls.
  mcp::SpanTimer span(opts.spans, *opts.trace, "tools/call", tool, mcp::Span::Kind::Internal);
  upstream::CallOptions inner = opts;
  inner.trace = span.context();
  upstream::Reply r = co_await run_rounds(tool, arguments, inner);
  if (span.recording()) {
    mcp::describe_request(span.span(), "tools/call", tool, nullptr);
    span.span().set("mcpgw.plugin", name_);
    mcp::set_outcome(span.span(), r.rpc_error, r.body);
    span.finish();
  }
  co_return r;
}

Task<upstream::Reply> Plugin::run_rounds(std::string_view tool, const json::Value* arguments,
                                         const upstream::CallOptions& opts) {
  const std::string name(tool);
  const std::string args = arguments ? json::write(*arguments) : "{}";
  json::Document answers(rapidjson::kObjectType);
  std::string state = "null";
  // Each round runs the handler afresh with every answer so far; a round
  // that needs more input says so, and the client is asked.
  for (int round = 0; round < kMaxInputRounds; ++round) {
    upstream::Reply r = co_await offload(
        host_->pool(), [&] { return invoke(name, args, json::write(answers), state, opts); },
        [] { return upstream::Reply{false, mcp::tool_error("mcpgw is shutting down")}; });
    if (r.rpc_error || json::get_string(r.body, "resultType") != "input_required") co_return r;
    auto asked = co_await upstream::ask_client(r.body, opts, "plugin " + name_ + " (tool " + name + ")", true);
    if (!asked) co_return upstream::Reply{false, mcp::tool_error(asked.error())};
    for (auto& m : asked->body.GetObject())
      json::set(answers, std::string_view(m.name.GetString(), m.name.GetStringLength()),
                json::copy(m.value, answers.GetAllocator()), answers.GetAllocator());
    const json::Value* s = json::find(r.body, "state");
    state = s ? json::write(*s) : "null";
  }
  co_return upstream::Reply{false, mcp::tool_error("plugin " + name_ + ": tool " + name +
                                                   " asked for client input more than " +
                                                   std::to_string(kMaxInputRounds) + " times")};
}

upstream::Reply Plugin::invoke(const std::string& name, const std::string& args, std::string answers,
                               std::string state, const upstream::CallOptions& opts) {
  mcpgw_call call{this, &opts, {}, {}, 0, std::move(answers), std::move(state)};
  OwnedString out;
  bool threw = false;
  try {
    out.reset(desc_->call(state_, &call, name.c_str(), args.c_str()));
  } catch (...) {
    threw = true;
  }
  {
    // Asynchronous calls still running use `call`: it must outlive them.
    util::UniqueLock lk(call.mu);
    call.idle.wait(lk.native(), [&]() REQUIRES(call.mu) { return call.outstanding == 0; });
  }
  auto fail = [&](const std::string& why) {
    spdlog::error("plugin {}: tool {}: {}", name_, name, why);
    return upstream::Reply{false, mcp::tool_error("plugin " + name_ + ": tool " + name + " " + why)};
  };
  if (threw) return fail("threw an exception across the C ABI");
  if (!out) return fail("returned no result");
  auto result = json::parse(out.get());
  if (!result) return fail("returned invalid JSON: " + result.error());
  if (!result->IsObject()) return fail("returned a result that is not a JSON object");
  if (json::get_string(*result, "resultType") == "input_required") {
    const json::Value* requests = json::find(*result, "inputRequests");
    if (!requests || !requests->IsObject() || requests->ObjectEmpty())
      return fail("asked for client input without inputRequests");
    return upstream::Reply{false, std::move(*result)};
  }
  // content is required by MCP; a plugin that only sets structuredContent
  // still gives a valid result.
  if (!json::find(*result, "content"))
    result->AddMember("content", json::Value(rapidjson::kArrayType), result->GetAllocator());
  return upstream::Reply{false, std::move(*result)};
}

LoadResult load_all(const std::vector<config::Plugin>& cfgs, const std::shared_ptr<Host>& host,
                    const std::vector<std::shared_ptr<Plugin>>& reuse) {
  LoadResult out;
  for (const auto& cfg : cfgs) {
    std::shared_ptr<Plugin> p;
    auto same = std::find_if(reuse.begin(), reuse.end(), [&](const auto& r) { return r->config() == cfg; });
    if (same != reuse.end()) {
      p = *same;
    } else {
      auto loaded = Plugin::load(cfg, host);
      if (!loaded) {
        out.errors.push_back(loaded.error());
        continue;
      }
      p = std::move(*loaded);
    }
    auto clash = std::find_if(out.plugins.begin(), out.plugins.end(), [&](const auto& o) { return o->name() == p->name(); });
    if (clash != out.plugins.end()) {
      out.errors.push_back("plugin " + cfg.path + ": name \"" + p->name() + "\" is already used by plugin " +
                           (*clash)->config().path + "; left out");
      continue;
    }
    out.plugins.push_back(std::move(p));
  }
  return out;
}

}  // namespace mcpgw::plugin
