#pragma once
// What the two source files of conformance-server share: the content
// helpers, asking the client, and the lists its trigger tools change.
#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/protocol.hpp"
#include "server_kit.hpp"

namespace mcpgw::examples::conformance {

namespace ex = mcpgw::examples;

/// `s` as a JSON string literal.
std::string quote(std::string_view s);
/// A text content item, serialised.
std::string text_item(std::string_view text);
/// A GetPromptResult of user messages with `contents`.
json::Document prompt_result(const std::vector<std::string>& contents);
/// "action=accept, content={...}" for an ElicitResult.
std::string elicit_summary(const json::Value& result);
/// The text of a CreateMessageResult.
std::string sampled_text(const json::Value& result);
/// Member `field` of an ElicitResult's content when the user accepted, else
/// a word saying what the user did instead.
std::string accepted_field(const json::Value& result, std::string_view field);
/// elicitation/create params: `message` and the requested `schema` (JSON text).
json::Document elicitation_params(std::string_view message, std::string_view schema);

/// Asks the client `method` (input key `key`) and turns what comes back
/// into the tool's text via `describe`; every way of not getting an answer
/// (the client lacks the capability, refuses, never answers) is a tool
/// error saying why.
template <typename Describe>
ex::ToolOutcome ask_client(ex::CallContext& ctx, std::string_view key, std::string_view method,
                           const json::Value& params, Describe describe, bool mid_call_only = false) {
  // Like a server whose tools can only ask in the middle of a call (the
  // conformance repository's everything-server): in the stateless era the
  // call fails instead of answering input_required.
  if (mid_call_only && ctx.stateless())
    return mcp::tool_error(std::string(method) +
                           " is asked mid-call, which protocol 2026-07-28 does not allow: call this tool in a "
                           "2025-11-25 session");
  ex::Outcome answer = ctx.request(method, params, key);
  if (auto* err = std::get_if<ex::RpcError>(&answer))
    return mcp::tool_error(std::string(method) + " failed: " + err->message);
  return ex::text_result(describe(std::get<json::Document>(answer)));
}

/// test_trigger_tool_change and test_trigger_prompt_change really change the
/// lists (a generation counter in a description), so a client, or a gateway
/// in front that forwards only real changes, sees what list_changed announces.
class DynamicLists {
 public:
  explicit DynamicLists(ex::Server& server) : server_(server) {}

  ex::ToolSpec trigger_tool(int generation) {
    return {
        .name = "test_trigger_tool_change",
        .description = "Changes the tool list: each call bumps the generation in this description (now " +
                       std::to_string(generation) + ") and announces notifications/tools/list_changed.",
        .handler = [this](const json::Value&) {
          const int next = ++tool_generation_;
          server_.replace_tool(trigger_tool(next));
          return ex::text_result("Tool list changed (generation " + std::to_string(next) + ")");
        },
    };
  }

  ex::ToolSpec prompt_trigger_tool() {
    return {
        .name = "test_trigger_prompt_change",
        .description = "Changes the prompt list: bumps the generation in test_dynamic_prompt's description and "
                       "announces notifications/prompts/list_changed.",
        .handler = [this](const json::Value&) {
          const int next = ++prompt_generation_;
          server_.replace_prompt(dynamic_prompt(next));
          return ex::text_result("Prompt list changed (generation " + std::to_string(next) + ")");
        },
    };
  }

  ex::PromptSpec dynamic_prompt(int generation) {
    return {
        .name = "test_dynamic_prompt",
        .title = "Dynamic Prompt",
        .description = "A prompt whose description test_trigger_prompt_change rewrites (generation " +
                       std::to_string(generation) + ")",
        .get = [generation](const ex::PromptArgs&) {
          return prompt_result({text_item("Dynamic prompt, generation " + std::to_string(generation) + ".")});
        },
    };
  }

 private:
  ex::Server& server_;
  std::atomic<int> tool_generation_{1};
  std::atomic<int> prompt_generation_{1};
};

/// The tools of the stateless era (conformance_stateless_tools.cpp).
void add_stateless_tools(ex::Server& server, DynamicLists& lists);

/// The tasks extension (io.modelcontextprotocol/tasks) the suite's tasks-*
/// scenarios expect, its tools and methods (conformance_tasks.cpp).
void add_task_tools(ex::Server& server);

}  // namespace mcpgw::examples::conformance
