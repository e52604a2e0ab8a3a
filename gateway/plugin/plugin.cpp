#include "plugin/plugin.hpp"

#include <mcpgw/plugin.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "mcp/protocol.hpp"
#include "plugin/in_process.hpp"
#include "plugin/isolated.hpp"

namespace mcpgw::plugin {

void log_line(std::string_view name, int level, std::string_view message) {
  switch (level) {
    case MCPGW_LOG_DEBUG: spdlog::debug("plugin {}: {}", name, message); break;
    case MCPGW_LOG_INFO: spdlog::info("plugin {}: {}", name, message); break;
    case MCPGW_LOG_WARN: spdlog::warn("plugin {}: {}", name, message); break;
    default: spdlog::error("plugin {}: {}", name, message); break;
  }
}

FileIdentity identify(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return FileIdentity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                      static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

Host::Host(UpstreamLookup lookup, asio::any_io_executor io) : lookup_(std::move(lookup)), io_(std::move(io)), pool_(0, 256) {}

Host::~Host() = default;

Plugin::Plugin(config::Plugin cfg, std::shared_ptr<Host> host) : cfg_(std::move(cfg)), host_(std::move(host)) {}

Plugin::~Plugin() {
  engine_.reset();
  if (loaded_) spdlog::info("plugin {} unloaded", name_);
}

namespace {

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
  std::shared_ptr<Plugin> p(new Plugin(cfg, host));
  p->file_ = identify(cfg.path);
  std::string tools_json;
  if (cfg.isolation == config::Plugin::Isolation::None) {
    auto opened = InProcess::open(cfg, std::move(host));
    if (!opened) return Error{opened.error()};
    p->engine_ = std::move(opened->engine);
    p->name_ = std::move(opened->name);
    p->version_ = std::move(opened->version);
    tools_json = std::move(opened->tools_json);
  } else {
    auto opened = Isolated::open(cfg, std::move(host));
    if (!opened) return Error{opened.error()};
    p->engine_ = std::move(opened->engine);
    p->name_ = std::move(opened->hello.name);
    p->version_ = std::move(opened->hello.version);
    tools_json = std::move(opened->hello.tools_json);
  }
  const std::string who = "plugin " + cfg.path + " (" + p->name_ + ")";
  auto tools = json::parse(tools_json);
  if (!tools) return Error{who + ": list_tools returned invalid JSON: " + tools.error()};
  if (!tools->IsArray()) return Error{who + ": list_tools must return a JSON array of tools"};
  if (auto checked = check_tools(*tools, who); !checked) return Error{checked.error()};
  p->tools_ = std::move(*tools);
  p->loaded_ = true;
  if (int pid = p->pid()) spdlog::info("plugin {}: running in host process {}", p->name_, pid);
  spdlog::info("plugin {} {} loaded from {}: {} tools", p->name_, p->version_, cfg.path, p->tools_.Size());
  return p;
}

bool Plugin::has_tool(std::string_view tool) const {
  for (const auto& t : tools_.GetArray())
    if (json::get_string(t, "name") == tool) return true;
  return false;
}

std::string Plugin::down() const { return engine_->down(); }

int Plugin::pid() const { return engine_->pid(); }

std::string Plugin::memory_limit() const { return engine_->memory_limit(); }

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
    std::string given = json::write(answers);
    upstream::Reply r = co_await run_once(name, args, std::move(given), state, opts);
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

Task<upstream::Reply> Plugin::run_once(std::string name, std::string args, std::string answers, std::string state,
                                       const upstream::CallOptions& opts) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.timeout_ms);
  if (!co_await acquire(deadline, opts.cancel)) {
    const std::string why = opts.cancel && opts.cancel->cancelled()
                                ? " was cancelled while it waited for a free max_concurrency slot"
                                : " waited timeout_ms (" + std::to_string(cfg_.timeout_ms) + " ms) for one of its " +
                                      std::to_string(cfg_.max_concurrency) + " max_concurrency slots";
    co_return upstream::Reply{false, mcp::tool_error("plugin " + name_ + ": tool " + name + why)};
  }
  // A named local, not a temporary in the co_await expression: GCC 12
  // destroys such temporaries twice.
  const Run run{name, std::move(args), std::move(answers), std::move(state)};
  Outcome o = co_await engine_->call(run, opts, deadline);
  release();
  co_return reply(name, std::move(o));
}

Task<bool> Plugin::acquire(std::chrono::steady_clock::time_point deadline, CancelSignal* cancel) {
  for (;;) {
    const auto seen = slot_freed_.generation();
    {
      util::MutexLock lk(slots_mu_);
      if (running_ < cfg_.max_concurrency) {
        ++running_;
        co_return true;
      }
    }
    if (!co_await slot_freed_.wait(seen, deadline, cancel) || (cancel && cancel->cancelled())) co_return false;
  }
}

void Plugin::release() {
  {
    util::MutexLock lk(slots_mu_);
    --running_;
  }
  slot_freed_.notify();
}

upstream::Reply Plugin::reply(const std::string& tool, Outcome o) const {
  auto fail = [&](const std::string& why) {
    spdlog::error("plugin {}: tool {}: {}", name_, tool, why);
    return upstream::Reply{false, mcp::tool_error("plugin " + name_ + ": tool " + tool + " " + why)};
  };
  switch (o.kind) {
    case Outcome::Kind::Failed:
      spdlog::error("{}", o.text);
      return upstream::Reply{false, mcp::tool_error(o.text)};
    case Outcome::Kind::Threw: return fail("threw an exception across the C ABI");
    case Outcome::Kind::NoResult: return fail("returned no result");
    case Outcome::Kind::Result: break;
  }
  auto result = json::parse(o.text);
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
    const FileIdentity now = identify(cfg.path);
    // In process, a library overwritten in place (same inode) cannot be
    // loaded anew: dlopen would hand back the one already mapped.
    const bool in_place = cfg.isolation == config::Plugin::Isolation::None && same != reuse.end() &&
                          now.inode == (*same)->file().inode && now.device == (*same)->file().device;
    if (same != reuse.end() && (now == (*same)->file() || in_place)) {
      if (!(now == (*same)->file()))
        spdlog::warn("plugin {}: {} changed in place; under isolation: none a library is loaded anew only when "
                     "replaced by a new file (install or mv, not cp over it): keeping the loaded one",
                     (*same)->name(), cfg.path);
      p = *same;
    } else {
      if (same != reuse.end()) spdlog::info("plugin {}: {} changed on disk; loading it anew", (*same)->name(), cfg.path);
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
