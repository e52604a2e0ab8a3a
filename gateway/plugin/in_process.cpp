#include "plugin/in_process.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>
#include <mcpgw/plugin.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <boost/asio/strand.hpp>

#include "mcp/protocol.hpp"
#include "plugin/upstream_call.hpp"
#include "util/offload.hpp"
#include "util/thread_annotations.hpp"

// The C ABI's opaque types, defined at global scope where plugin.h declares
// them.

/// Per plugin: what its host functions act on.
struct mcpgw_host_state {
  const mcpgw::plugin::InProcess* plugin;
};

/// One running call of a plugin tool. Lives on the stack of
/// InProcess::invoke, which waits for its asynchronous calls before
/// returning.
struct mcpgw_call {
  const mcpgw::plugin::InProcess* plugin;
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

/// The call a plugin asked for, run to the end on the loop while this pool
/// thread waits; the CallToolResult as JSON.
std::string run_upstream_call(const mcpgw_call& call, const char* server, const char* tool, const char* arguments) {
  Host& host = call.plugin->host();
  return block_on(asio::make_strand(host.io()), call_upstream(host, *call.opts, server, tool, arguments),
                  [] { return json::write(mcp::tool_error("mcpgw is shutting down")); });
}

void host_log(const mcpgw_host* host, mcpgw_log_level level, const char* message) {
  if (host && host->state && message) log_line(host->state->plugin->name(), static_cast<int>(level), message);
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

/// Opens the library at `path` into `handle` and checks the descriptor its
/// entry point gives (`where` names it in errors).
Result<const mcpgw_plugin*> open_descriptor(const std::string& path, const std::string& where, void*& handle) {
  dlerror();
  // dlopen finds a library already loaded under the same name without
  // looking at the file: one rebuilt on disk while its old instance is
  // loaded (a SIGHUP reload) is opened through its descriptor, a name of
  // its own, so that the new file is what loads.
  std::string name = path;
  int fd = -1;
  if (void* loaded = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
    dlclose(loaded);
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) name = "/proc/self/fd/" + std::to_string(fd);
  }
  handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (fd >= 0) ::close(fd);
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

}  // namespace

struct InProcess::Library {
  void* handle = nullptr;
  mcpgw_host_state state{};
  mcpgw_host host{};
  ~Library() {
    if (handle) dlclose(handle);
  }
};

InProcess::InProcess(std::shared_ptr<Host> host, std::string path)
    : host_(std::move(host)), path_(std::move(path)), lib_(std::make_unique<Library>()) {}

InProcess::~InProcess() {
  if (!initialized_) return;
  try {
    if (desc_->shutdown) desc_->shutdown(state_);
  } catch (...) {
    spdlog::error("plugin {}: shutdown threw an exception across the C ABI", name_);
  }
}

Result<InProcess::Opened> InProcess::open(const config::Plugin& cfg, std::shared_ptr<Host> host) {
  // Not make_unique: the constructor is private to keep open() the only way in.
  std::unique_ptr<InProcess> p(new InProcess(std::move(host), cfg.path));
  const std::string where = "plugin " + cfg.path;
  auto opened = open_descriptor(cfg.path, where, p->lib_->handle);
  if (!opened) return Error{opened.error()};
  const mcpgw_plugin* d = *opened;
  p->desc_ = d;
  p->name_ = d->name;

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
  Opened out{nullptr, p->name_, d->version ? d->version : "", listed.get()};
  out.engine = std::move(p);
  return out;
}

Task<Outcome> InProcess::call(const Run& run, const upstream::CallOptions& opts,
                              std::chrono::steady_clock::time_point) {
  co_return co_await offload(
      host_->pool(), [&] { return invoke(run, opts); },
      [] { return Outcome{Outcome::Kind::Failed, "mcpgw is shutting down"}; });
}

Outcome InProcess::invoke(const Run& run, const upstream::CallOptions& opts) {
  mcpgw_call call{this, &opts, {}, {}, 0, run.answers, run.state};
  OwnedString out;
  bool threw = false;
  try {
    out.reset(desc_->call(state_, &call, run.tool.c_str(), run.arguments.c_str()));
  } catch (...) {
    threw = true;
  }
  {
    // Asynchronous calls still running use `call`: it must outlive them.
    util::UniqueLock lk(call.mu);
    call.idle.wait(lk.native(), [&]() REQUIRES(call.mu) { return call.outstanding == 0; });
  }
  if (threw) return Outcome{Outcome::Kind::Threw, {}};
  if (!out) return Outcome{Outcome::Kind::NoResult, {}};
  return Outcome{Outcome::Kind::Result, out.get()};
}

}  // namespace mcpgw::plugin
