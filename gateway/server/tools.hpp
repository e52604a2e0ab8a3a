#pragma once
// The work of a tool call, shared by tools/call and the saga methods.
#include <memory>
#include <variant>

#include "server/calls.hpp"

namespace mcpgw::server {

/// The exposed tool a tools/call or tools/callSaga names, for its client.
struct CalledTool {
  std::shared_ptr<const catalog::Snapshot> snap;
  std::size_t mode = 0;
  const catalog::ExposedTool* tool = nullptr;
  const json::Value* args = nullptr;  ///< null: no arguments
  bool through_call_tool = false;     ///< named by call_tool (tool search)
  /// Named by its upstream's own name (a view's call, a bare name): its
  /// arguments are in the upstream's names too (servers[].tools).
  bool by_upstream_name = false;
  /// Set (and `tool` null): the tool `name` is not listed, but this OAuth
  /// server may list it once the caller has a token (its consent first).
  std::shared_ptr<upstream::Upstream> unlisted;
  std::string name;  ///< the exposed name called
};

/// What resolving the tool of a call came to.
enum class Resolution {
  Called,      ///< the tool (or an OAuth server that may list it) is known
  Answered,    ///< the call ends here, with the Answer
  Connecting,  ///< a server still connecting may list it: wait, then again
};

/// The tool request `r` calls, into `called`, without waiting. What ends the
/// call before it runs (bad params, an unknown, hidden or ambiguous tool, a
/// refused call_tool) is the Answer, audited as `refused`: probing for tools
/// is what an auditor looks for. A search_tools call is answered here too
/// (audited as a `call`).
Resolution resolve_called(Services& sv, Request& r, CalledTool& called, std::optional<Answer>& answer);
/// After resolve_called said Connecting: waits, within the call's deadline,
/// for the servers still connecting that may list the tool, then resolves
/// it again (Called or Answered; a server that came too late is named).
Task<Resolution> resolve_called_after_connecting(Services& sv, Request& r, CalledTool& called,
                                                 std::optional<Answer>& answer);

/// Audits the refusal of call `r` of `tool` (counted in
/// mcpgw_refused_total by `reason`) and returns error `code` with `message`.
Answer refuse_call(Services& sv, Request& r, std::string_view reason, std::string_view tool, const json::Value* args,
                   int code, const std::string& message);
/// Audits and counts `answer`, an error refusing `r`'s call of `tool`
/// for `reason`, and returns it (refuse_call for answers with data).
Answer refused_call(Services& sv, Request& r, std::string_view reason, std::string_view tool, const json::Value* args,
                    Answer answer);

/// Runs tool `c`, admitted by tools/callSaga, as a saga: the final
/// result, or the suspended state with a sagaToken and the steps.
Task<Answer> run_saga(Services& sv, Request& r, const CalledTool& c);

/// The work of call `c` by the session of `r` with `arguments` (tool_work,
/// or for an unlisted tool of an OAuth server the consent step first);
/// `relay` and `raw_arguments` as for tool_work.
Work called_work(Services& sv, Request& r, const CalledTool& c, std::shared_ptr<json::Document> arguments,
                 std::shared_ptr<json::Document> meta, bool relay = false,
                 std::shared_ptr<const jsonrpc::RawArguments> raw_arguments = nullptr);

/// The work of a call of `tool` by `s` with `arguments` (and the `_meta`
/// the upstream may see), nextTool chains included; it owns everything it
/// reads, so it may outlive the request. `task` set: the upstream may run
/// the call as a task (upstream::CallOptions::task); the chain's hops never.
/// `relay`: its answer goes to the client as it is (ToolCallContext::relay).
/// `raw_arguments`: the bytes `arguments` is a copy of
/// (ToolCallContext::raw_arguments), or null.
Work tool_work(Services& sv, const McpSession& s, std::shared_ptr<const catalog::Snapshot> snap, std::size_t mode,
               const catalog::ExposedTool& tool, std::shared_ptr<json::Document> arguments,
               std::shared_ptr<json::Document> meta, std::optional<mcp::TraceContext> request_span = std::nullopt,
               std::shared_ptr<const json::Document> task = nullptr, bool relay = false,
               std::shared_ptr<const jsonrpc::RawArguments> raw_arguments = nullptr);

}  // namespace mcpgw::server
