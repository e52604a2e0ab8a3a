// mcpgw-plugin-host: runs one composite plugin in a process of its own, so
// that whatever the plugin does (crash, loop, leak, print) costs only its
// own calls. The gateway starts it with the library's path, speaks the
// framed protocol of frame.hpp on its stdin and stdout, and reads its
// stderr into the gateway log. The plugin sees the unchanged C ABI v1:
// every host function is answered here, the ones that need the gateway
// (calls to upstream servers) by a round trip over the protocol.
//
//   mcpgw-plugin-host LIBRARY [--memory-mb N]
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <mcpgw/plugin.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "plugin_host/address_limit.hpp"
#include "plugin_host/frame.hpp"

namespace ph = mcpgw::plugin_host;

struct mcpgw_host_state {
  struct Host* host;
};

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

/// An upstream call of the plugin's, waiting for the gateway's answer.
struct UpstreamWait {
  mcpgw_tool_done done = nullptr;  ///< null: call_tool waits for `result`
  void* user_data = nullptr;
  std::optional<std::string> result;
};

}  // namespace

/// One running call; what the host functions taking an mcpgw_call act on.
struct mcpgw_call {
  struct Host* host = nullptr;
  std::uint64_t id = 0;
  std::string principal, mode, answers, state;
  std::atomic<bool> cancelled{false};
  std::mutex mu;
  std::condition_variable cv;
  std::uint64_t next_sub = 1;
  std::map<std::uint64_t, UpstreamWait> upstream;  ///< under mu
  int outstanding = 0;                              ///< async calls whose done has not returned; under mu
};

/// The process's one plugin and its link to the gateway.
struct Host {
  int in = -1, out = -1;
  const mcpgw_plugin* desc = nullptr;
  void* state = nullptr;
  mcpgw_host_state host_state{this};
  mcpgw_host abi{};

  std::mutex write_mu;
  std::mutex calls_mu;
  std::map<std::uint64_t, std::shared_ptr<mcpgw_call>> calls;  ///< under calls_mu
  bool closed = false;                                         ///< the gateway went away; under calls_mu
  std::condition_variable calls_idle;

  // Threads for handlers and async completions: one per task at once, kept
  // for the next (the gateway bounds how many calls run at once).
  std::mutex pool_mu;
  std::condition_variable pool_cv;
  std::deque<std::function<void()>> tasks;
  int idle = 0;

  /// Sends one frame; a gateway that went away ends the process (its calls
  /// have nobody to answer).
  void send(ph::Type type, std::uint64_t id, std::uint64_t sub,
            std::initializer_list<std::optional<std::string_view>> fields) {
    std::string buf;
    ph::encode(buf, type, id, sub, fields);
    std::lock_guard lk(write_mu);
    std::size_t off = 0;
    while (off < buf.size()) {
      ssize_t n = ::write(out, buf.data() + off, buf.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) _exit(0);
      off += static_cast<std::size_t>(n);
    }
  }

  void submit(std::function<void()> task) {
    std::lock_guard lk(pool_mu);
    tasks.push_back(std::move(task));
    if (idle > 0) {
      pool_cv.notify_one();
      return;
    }
    std::thread([this] { work(); }).detach();
  }

  void work() {
    std::unique_lock lk(pool_mu);
    for (;;) {
      while (!tasks.empty()) {
        auto task = std::move(tasks.front());
        tasks.pop_front();
        lk.unlock();
        task();
        lk.lock();
      }
      ++idle;
      pool_cv.wait(lk, [&] { return !tasks.empty(); });
      --idle;
    }
  }
};

namespace {

void host_log(const mcpgw_host* host, mcpgw_log_level level, const char* message) {
  if (!host || !host->state || !message) return;
  const char lv[2] = {static_cast<char>('0' + std::clamp(static_cast<int>(level), 0, 3)), '\0'};
  host->state->host->send(ph::Type::Log, 0, 0, {lv, message});
}

void deliver(Host& h, std::uint64_t id, std::uint64_t sub, std::string result);

/// The error result the gateway would give for an upstream call that cannot
/// be made because the gateway is gone.
constexpr std::string_view kGatewayGone =
    R"({"isError":true,"content":[{"type":"text","text":"mcpgw: the gateway closed this plugin host"}]})";

/// Starts an upstream call in the gateway; the answer comes back through
/// the reader, into `wait`.
std::uint64_t start_upstream(mcpgw_call* call, const char* server, const char* tool, const char* args,
                             UpstreamWait wait) {
  std::uint64_t sub;
  {
    std::lock_guard lk(call->mu);
    sub = call->next_sub++;
    if (wait.done) ++call->outstanding;
    call->upstream.emplace(sub, std::move(wait));
  }
  bool closed;
  {
    std::lock_guard lk(call->host->calls_mu);
    closed = call->host->closed;
  }
  if (closed) {
    deliver(*call->host, call->id, sub, std::string(kGatewayGone));
    return sub;
  }
  auto opt = [](const char* s) { return s ? std::optional<std::string_view>(s) : std::nullopt; };
  call->host->send(ph::Type::Upstream, call->id, sub, {opt(server), opt(tool), opt(args)});
  return sub;
}

char* host_call_tool(mcpgw_call* call, const char* server, const char* tool, const char* args) {
  std::uint64_t sub = start_upstream(call, server, tool, args, UpstreamWait{});
  std::unique_lock lk(call->mu);
  auto& w = call->upstream.at(sub);
  call->cv.wait(lk, [&] { return w.result.has_value(); });
  std::string r = std::move(*w.result);
  call->upstream.erase(sub);
  return alloc_string(r);
}

void host_call_tool_async(mcpgw_call* call, const char* server, const char* tool, const char* args,
                          mcpgw_tool_done done, void* user_data) {
  if (!done) return;
  start_upstream(call, server, tool, args, UpstreamWait{done, user_data, {}});
}

const char* host_principal(const mcpgw_call* call) { return call->principal.c_str(); }
const char* host_mode(const mcpgw_call* call) { return call->mode.c_str(); }
int host_cancelled(const mcpgw_call* call) { return call->cancelled ? 1 : 0; }
char* host_input_responses(const mcpgw_call* call) { return alloc_string(call->answers); }
char* host_input_state(const mcpgw_call* call) { return alloc_string(call->state); }

/// An answer to an upstream call (`result`), to its waiter.
void deliver(Host& h, std::uint64_t id, std::uint64_t sub, std::string result) {
  std::shared_ptr<mcpgw_call> call;
  {
    std::lock_guard lk(h.calls_mu);
    auto it = h.calls.find(id);
    if (it == h.calls.end()) return;
    call = it->second;
  }
  std::unique_lock lk(call->mu);
  auto it = call->upstream.find(sub);
  if (it == call->upstream.end()) return;
  if (!it->second.done) {
    it->second.result = std::move(result);
    call->cv.notify_all();
    return;
  }
  auto done = it->second.done;
  void* user = it->second.user_data;
  call->upstream.erase(it);
  lk.unlock();
  // The plugin's callback may block (even call call_tool): on a pool
  // thread, never on the reader.
  h.submit([call, done, user, r = std::move(result)] {
    done(user, alloc_string(r));
    std::lock_guard lk(call->mu);
    if (--call->outstanding == 0) call->cv.notify_all();
  });
}

/// Runs one call to its end and sends its result.
void run_call(Host& h, std::shared_ptr<mcpgw_call> call, std::string tool, std::string args) {
  char* out = nullptr;
  std::string status = "ok";
  try {
    out = h.desc->call(h.state, call.get(), tool.c_str(), args.c_str());
  } catch (const std::bad_alloc&) {
    status = "oom";
  } catch (...) {
    status = "threw";
  }
  {
    // Asynchronous calls still running use `call`: it must outlive them.
    std::unique_lock lk(call->mu);
    call->cv.wait(lk, [&] { return call->outstanding == 0; });
  }
  if (status == "ok" && !out) status = "null";
  h.send(ph::Type::Result, call->id, 0, {status, out ? std::string_view(out) : std::string_view()});
  free_string(out);
  {
    std::lock_guard lk(h.calls_mu);
    h.calls.erase(call->id);
    if (h.calls.empty()) h.calls_idle.notify_all();
  }
  // Out of memory (memory_mb): the process may be in no state to go on;
  // the gateway starts a fresh one.
  if (status == "oom") _exit(3);
}

bool valid_plugin_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

constexpr std::size_t kDescriptorV1Size = offsetof(mcpgw_plugin, shutdown) + sizeof(mcpgw_plugin::shutdown);

/// Loads the library and checks its descriptor; the message of what is
/// wrong (the gateway prefixes the plugin's path), or "" when it is fine.
std::string open_plugin(Host& h, const char* path) {
  dlerror();
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return std::string("cannot load: ") + (why ? why : "unknown dlopen error");
  }
  void* sym = dlsym(handle, MCPGW_PLUGIN_ENTRY);
  if (!sym)
    return "no entry point " MCPGW_PLUGIN_ENTRY
           " (define it with MCPGW_PLUGIN from <mcpgw/plugin.hpp>, or export extern \"C\" "
           "const mcpgw_plugin* " MCPGW_PLUGIN_ENTRY "(void))";
  const mcpgw_plugin* d = reinterpret_cast<mcpgw_plugin_entry_v1>(sym)();
  if (!d) return MCPGW_PLUGIN_ENTRY " returned no descriptor";
  if (d->abi_version != MCPGW_PLUGIN_ABI_VERSION)
    return "built for plugin ABI version " + std::to_string(d->abi_version) + ", this mcpgw speaks version " +
           std::to_string(MCPGW_PLUGIN_ABI_VERSION) + "; rebuild it against this mcpgw's <mcpgw/plugin.h>";
  if (d->struct_size < kDescriptorV1Size)
    return "descriptor is " + std::to_string(d->struct_size) + " bytes, ABI version 1 needs " +
           std::to_string(kDescriptorV1Size);
  if (!d->name || !valid_plugin_name(d->name))
    return std::string("plugin name must match [A-Za-z0-9_.-]+, got ") + (d->name ? "\"" + std::string(d->name) + "\"" : "none");
  if (!d->init || !d->list_tools || !d->call)
    return std::string("descriptor lacks ") + (!d->init ? "init" : !d->list_tools ? "list_tools" : "call");
  h.desc = d;
  return "";
}

/// Reads whole frames from the gateway; false at its end or on a broken frame.
bool read_frame(int fd, ph::Decoder& dec, ph::Frame& f) {
  char buf[64 * 1024];
  for (;;) {
    switch (dec.next(f)) {
      case ph::Decoder::Status::Frame: return true;
      case ph::Decoder::Status::Broken: return false;
      case ph::Decoder::Status::More: break;
    }
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    dec.feed(std::string_view(buf, static_cast<std::size_t>(n)));
  }
}

/// The address-space limit of memory_mb, when the gateway has no cgroup
/// for it (it passes --memory-mb then). Not in a sanitizer build
/// (address_limit.hpp).
void limit_memory(long mb) {
  if (!mcpgw::plugin_host::kAddressLimitWorks || mb <= 0) return;
  // Each malloc arena reserves 64 MiB of address space: a few keep the
  // limit about memory in use, not about reservations.
  mallopt(M_ARENA_MAX, 2);
  rlimit r{static_cast<rlim_t>(mb) * 1024 * 1024, static_cast<rlim_t>(mb) * 1024 * 1024};
  setrlimit(RLIMIT_AS, &r);
}

/// Serves calls until the gateway closes the protocol, then lets the calls
/// in flight end and shuts the plugin down.
void serve(Host& h, ph::Decoder& dec) {
  ph::Frame f;
  while (read_frame(h.in, dec, f)) {
    switch (f.type) {
      case ph::Type::Call: {
        auto call = std::make_shared<mcpgw_call>();
        call->host = &h;
        call->id = f.id;
        call->principal = f.text(4);
        call->mode = f.text(5);
        call->answers = f.text(2);
        call->state = f.text(3);
        {
          std::lock_guard lk(h.calls_mu);
          h.calls[f.id] = call;
        }
        h.submit([&h, call, tool = std::string(f.text(0)), args = std::string(f.text(1))]() mutable {
          run_call(h, std::move(call), std::move(tool), std::move(args));
        });
        break;
      }
      case ph::Type::Cancel: {
        std::lock_guard lk(h.calls_mu);
        if (auto it = h.calls.find(f.id); it != h.calls.end()) it->second->cancelled = true;
        break;
      }
      case ph::Type::UpstreamDone: deliver(h, f.id, f.sub, std::string(f.text(0))); break;
      default: break;
    }
  }
  // The gateway is gone: upstream calls waiting get an error, the handlers
  // end, and shutdown runs after the last (as the ABI promises).
  std::vector<std::shared_ptr<mcpgw_call>> running;
  {
    std::lock_guard lk(h.calls_mu);
    h.closed = true;
    for (auto& [id, call] : h.calls) running.push_back(call);
  }
  for (auto& call : running) {
    std::vector<std::uint64_t> subs;
    {
      std::lock_guard clk(call->mu);
      for (auto& [sub, w] : call->upstream) subs.push_back(sub);
    }
    for (auto sub : subs) deliver(h, call->id, sub, std::string(kGatewayGone));
  }
  std::unique_lock lk(h.calls_mu);
  h.calls_idle.wait(lk, [&] { return h.calls.empty(); });
}

/// The protocol moves off fds 0 and 1: what the plugin prints to stdout
/// joins its stderr (read into the gateway log), and it reads nothing.
bool take_protocol_fds(Host& h) {
  h.in = fcntl(0, F_DUPFD_CLOEXEC, 3);
  h.out = fcntl(1, F_DUPFD_CLOEXEC, 3);
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (h.in < 0 || h.out < 0 || devnull < 0) return false;
  dup2(devnull, 0);
  dup2(2, 1);
  close(devnull);
  setvbuf(stdout, nullptr, _IOLBF, 0);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mcpgw-plugin-host LIBRARY [--memory-mb N]\n");
    return 2;
  }
  long memory_mb = 0;
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--memory-mb") == 0) memory_mb = std::strtol(argv[i + 1], nullptr, 10);

  Host h;
  if (!take_protocol_fds(h)) return 2;
  // The gateway ends a host by closing the protocol: the plugin then
  // shuts down; TERM (the gateway's process group) would cut that short.
  signal(SIGTERM, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  limit_memory(memory_mb);

  ph::Decoder dec;
  ph::Frame init;
  if (!read_frame(h.in, dec, init) || init.type != ph::Type::Init) return 2;
  if (std::string why = open_plugin(h, argv[1]); !why.empty()) {
    h.send(ph::Type::Failed, 0, 0, {": " + why});
    return 1;
  }
  h.abi = mcpgw_host{sizeof(mcpgw_host),
                     MCPGW_PLUGIN_ABI_VERSION,
                     &h.host_state,
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
  const std::string name = h.desc->name;
  char* error = nullptr;
  try {
    h.state = h.desc->init(&h.abi, init.c_str(0) ? init.c_str(0) : "{}", &error);
  } catch (...) {
    h.send(ph::Type::Failed, 0, 0, {" (" + name + "): init threw an exception across the C ABI"});
    return 1;
  }
  if (error) {
    h.send(ph::Type::Failed, 0, 0, {" (" + name + "): init failed: " + error});
    free_string(error);
    return 1;
  }
  char* listed = nullptr;
  try {
    listed = h.desc->list_tools(h.state);
  } catch (...) {
    h.send(ph::Type::Failed, 0, 0, {" (" + name + "): list_tools threw an exception across the C ABI"});
    return 1;
  }
  if (!listed) {
    h.send(ph::Type::Failed, 0, 0, {" (" + name + "): list_tools returned nothing"});
    return 1;
  }
  h.send(ph::Type::Ready, 0, 0, {name, h.desc->version ? h.desc->version : "", listed});
  free_string(listed);

  serve(h, dec);
  if (h.desc->shutdown) {
    try {
      h.desc->shutdown(h.state);
    } catch (...) {
      std::fprintf(stderr, "plugin %s: shutdown threw an exception across the C ABI\n", name.c_str());
    }
  }
  std::fflush(nullptr);
  // Pool threads may still wait for work: end without joining them.
  _exit(0);
}
