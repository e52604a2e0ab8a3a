#include "plugin/upstream_call.hpp"

#include <algorithm>
#include <optional>

#include "mcp/protocol.hpp"

namespace mcpgw::plugin {

Task<std::string> call_upstream(Host& host, const upstream::CallOptions& opts, const char* server, const char* tool,
                                const char* arguments) {
  auto fail = [](const std::string& why) { return json::write(mcp::tool_error(why)); };
  if (!server || !tool) co_return fail("call_tool needs a server and a tool name");
  auto up = host.find(server);
  if (!up) co_return fail("unknown server \"" + std::string(server) + "\" (not in gateway.yaml)");
  std::optional<json::Document> args;
  if (arguments) {
    auto parsed = json::parse(arguments);
    if (!parsed || !parsed->IsObject())
      co_return fail("arguments for " + std::string(server) + "/" + tool + " must be a JSON object");
    args = std::move(*parsed);
  }
  // The policies decide a composite's own upstream calls as the caller's.
  if (opts.vet_upstream_call)
    if (auto refused = opts.vet_upstream_call(up->name(), tool, args ? &*args : nullptr))
      co_return json::write(refused->body);
  upstream::CallOptions o;
  o.deadline = std::min(opts.deadline, up->deadline());
  o.cancel = opts.cancel;
  o.caller = opts.caller;
  // The client's progress token and its way back cover the plugin's own
  // upstream calls: their progress and requests reach the client.
  o.on_progress = opts.on_progress;
  o.client = opts.client;
  o.trace = opts.trace;
  o.spans = opts.spans;
  auto started = std::chrono::steady_clock::now();
  upstream::Reply r = co_await up->call_tool(tool, args ? &*args : nullptr, nullptr, o);
  // Before anything else reads it: the plugin is the operator's code, and
  // sees no more than a client would.
  if (opts.screen_upstream_reply) opts.screen_upstream_reply(r);
  if (opts.on_upstream_call) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    opts.on_upstream_call(upstream::UpstreamCall{up->name(), tool, args ? &*args : nullptr, up->has_tool(tool),
                                                 upstream::outcome_of(r, o), ms});
  }
  if (r.rpc_error) co_return fail("server " + up->name() + ": " + jsonrpc::describe_error(r.body));
  co_return json::write(r.body);
}

}  // namespace mcpgw::plugin
