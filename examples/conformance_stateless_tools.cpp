// Tools of the stateless era (2026-07-28): capability checks, per-request
// logging, listen streams and multi-round-trip requests (MRTR). They work in
// the stateful era too, asking in the middle of the call.
#include <string>
#include <string_view>

#include "conformance_fixture.hpp"

namespace mcpgw::examples::conformance {

std::string accepted_field(const json::Value& result, std::string_view field) {
  const auto action = json::get_string(result, "action").value_or("?");
  if (action != "accept") return "(" + std::string(action) + ")";
  const json::Value* content = json::find(result, "content");
  const json::Value* value = content ? json::find(*content, field) : nullptr;
  if (!value) return "(no " + std::string(field) + ")";
  return value->IsString() ? std::string(value->GetString(), value->GetStringLength()) : json::write(*value);
}

namespace {

/// A sampling/createMessage request for one user message.
json::Document sample(std::string_view text, int max_tokens) {
  return ex::parse_json(R"({"messages":[{"role":"user","content":)" + text_item(text) + R"(}],"maxTokens":)" +
                        std::to_string(max_tokens) + "}");
}

constexpr std::string_view kNameSchema =
    R"({"type":"object","properties":{"name":{"type":"string"}},"required":["name"]})";
constexpr std::string_view kConfirmSchema =
    R"({"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]})";

/// "uri (name), ..." for a ListRootsResult.
std::string roots_summary(const json::Value& result) {
  const json::Value* roots = json::find(result, "roots");
  if (!roots || !roots->IsArray() || roots->Empty()) return "(no roots)";
  std::string out;
  for (const auto& root : roots->GetArray()) {
    if (!out.empty()) out += ", ";
    out += std::string(json::get_string(root, "uri").value_or("?"));
    if (auto name = json::get_string(root, "name")) out += " (" + std::string(*name) + ")";
  }
  return out;
}

}  // namespace

void add_stateless_tools(ex::Server& server, DynamicLists& lists) {
  server.add_tool({
      .name = "test_missing_capability",
      .description = "Needs the client's sampling capability: a client without it gets the JSON-RPC error "
                     "-32021 (MissingRequiredClientCapability) instead of a result.",
      .context_handler = [](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        ex::Outcome answer = ctx.request("sampling/createMessage", sample("Say hello.", 20), "hello_sample");
        if (auto* err = std::get_if<ex::RpcError>(&answer)) return std::move(*err);
        return ex::text_result("The client can sample: " + sampled_text(std::get<json::Document>(answer)));
      },
  });
  server.add_tool({
      .name = "test_streaming_elicitation",
      .description = "Asks the user to confirm (elicitation/create). In 2026-07-28 the question goes out as an "
                     "input_required result, never as a request on the response stream.",
      .context_handler = [](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        json::Document params = elicitation_params("Continue with the streaming test?", kConfirmSchema);
        return ask_client(ctx, "stream_confirm", "elicitation/create", params,
                          [](const json::Value& r) { return "Streaming test answer: " + elicit_summary(r); });
      },
  });
  server.add_tool({
      .name = "test_logging_tool",
      .description = "Logs three info messages and answers at once. In 2026-07-28 they are sent only when the "
                     "request sets _meta io.modelcontextprotocol/logLevel.",
      .context_handler = [](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        ctx.log(ex::LogLevel::Info, "Logging tool started");
        ctx.log(ex::LogLevel::Info, "Logging tool working");
        ctx.log(ex::LogLevel::Info, "Logging tool done");
        return ex::text_result("Logging tool executed");
      },
  });
  server.add_tool(lists.trigger_tool(1));
  server.add_tool(lists.prompt_trigger_tool());

  server.add_tool({
      .name = "test_input_required_result_elicitation",
      .description = "Asks the user's name (elicitation, input key user_name) and greets them.",
      .context_handler = [](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        ex::Outcome answer =
            ctx.request("elicitation/create", elicitation_params("What is your name?", kNameSchema), "user_name");
        if (auto* err = std::get_if<ex::RpcError>(&answer)) return std::move(*err);
        return ex::text_result("Hello, " + accepted_field(std::get<json::Document>(answer), "name") + "!");
      },
  });
  server.add_tool({
      .name = "test_input_required_result_sampling",
      .description = "Asks the client's LLM for the capital of France (sampling, input key capital_question).",
      .context_handler = [](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        ex::Outcome answer = ctx.request("sampling/createMessage", sample("What is the capital of France?", 100),
                                         "capital_question");
        if (auto* err = std::get_if<ex::RpcError>(&answer)) return std::move(*err);
        return ex::text_result("The model answered: " + sampled_text(std::get<json::Document>(answer)));
      },
  });
  server.add_tool({
      .name = "test_input_required_result_list_roots",
      .description = "Asks the client for its roots (roots/list, input key client_roots) and lists them.",
      .context_handler = [](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        ex::Outcome answer = ctx.request("roots/list", json::Value(rapidjson::kObjectType), "client_roots");
        if (auto* err = std::get_if<ex::RpcError>(&answer)) return std::move(*err);
        return ex::text_result("Client roots: " + roots_summary(std::get<json::Document>(answer)));
      },
  });
  server.add_tool({
      .name = "test_input_required_result_request_state",
      .description = "Asks for a confirmation (input key confirm); in 2026-07-28 the answer comes back with the "
                     "requestState the first round issued.",
      .context_handler = [](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        ex::Outcome answer =
            ctx.request("elicitation/create", elicitation_params("Please confirm", kConfirmSchema), "confirm");
        if (auto* err = std::get_if<ex::RpcError>(&answer)) return std::move(*err);
        return ex::text_result("state-ok: confirmed=" + accepted_field(std::get<json::Document>(answer), "ok"));
      },
  });
  server.add_tool({
      .name = "test_input_required_result_multiple_inputs",
      .description = "Asks three questions at once: the user's name (user_name), a greeting from the LLM "
                     "(greeting) and the client's roots (client_roots).",
      .context_handler = [](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        ex::InputAnswers answers = ctx.request_all({
            {.key = "user_name",
             .method = "elicitation/create",
             .params = elicitation_params("What is your name?", kNameSchema)},
            {.key = "greeting", .method = "sampling/createMessage", .params = sample("Generate a greeting", 50)},
            {.key = "client_roots", .method = "roots/list", .params = "{}"},
        });
        for (auto& [key, answer] : answers)
          if (auto* err = std::get_if<ex::RpcError>(&answer)) return std::move(*err);
        auto result = [&](const char* key) -> const json::Value& { return std::get<json::Document>(answers.at(key)); };
        return ex::text_result("Name: " + accepted_field(result("user_name"), "name") +
                               "; greeting: " + sampled_text(result("greeting")) +
                               "; roots: " + roots_summary(result("client_roots")));
      },
  });
  server.add_tool({
      .name = "test_input_required_result_multi_round",
      .description = "Asks two questions one after the other: the user's name (step1), then their favourite "
                     "colour (step2). In 2026-07-28 that takes two input_required rounds.",
      .context_handler = [](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        ex::Outcome name =
            ctx.request("elicitation/create", elicitation_params("Step 1: What is your name?", kNameSchema), "step1");
        if (auto* err = std::get_if<ex::RpcError>(&name)) return std::move(*err);
        ex::Outcome color = ctx.request(
            "elicitation/create",
            elicitation_params("Step 2: What is your favorite color?",
                   R"({"type":"object","properties":{"color":{"type":"string"}},"required":["color"]})"),
            "step2");
        if (auto* err = std::get_if<ex::RpcError>(&color)) return std::move(*err);
        return ex::text_result(accepted_field(std::get<json::Document>(name), "name") + "'s favorite color is " +
                               accepted_field(std::get<json::Document>(color), "color"));
      },
  });
  server.add_tool({
      .name = "test_input_required_result_tampered_state",
      .description = "Asks for a confirmation (input key confirm); a requestState changed by the client is "
                     "rejected with -32602.",
      .context_handler = [](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        ex::Outcome answer = ctx.request("elicitation/create",
                                         elicitation_params("Please confirm to continue", kConfirmSchema), "confirm");
        if (auto* err = std::get_if<ex::RpcError>(&answer)) return std::move(*err);
        return ex::text_result("Confirmed: " + accepted_field(std::get<json::Document>(answer), "ok"));
      },
  });
  server.add_tool({
      .name = "test_input_required_result_capabilities",
      .description = "Asks the user's name by elicitation (user_name) or, when the client cannot elicit, asks its "
                     "LLM for one (sampling, generated_name).",
      .context_handler = [](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        ex::Outcome answer =
            ctx.request("elicitation/create", elicitation_params("What is your name?", kNameSchema), "user_name");
        if (auto* err = std::get_if<ex::RpcError>(&answer)) {
          if (err->code != ex::kMissingClientCapability) return std::move(*err);
          answer = ctx.request("sampling/createMessage", sample("Suggest a name for the user.", 20), "generated_name");
          if (auto* again = std::get_if<ex::RpcError>(&answer)) return std::move(*again);
          return ex::text_result("Hello, " + sampled_text(std::get<json::Document>(answer)) + " (name from sampling)");
        }
        return ex::text_result("Hello, " + accepted_field(std::get<json::Document>(answer), "name") + "!");
      },
  });
  server.add_tool({
      .name = "test_custom_header_tool",
      .description = "Echoes `greeting`; over stateless HTTP the value must also travel in the Mcp-Param-Greeting "
                     "header (x-mcp-header).",
      .input_schema = R"({
        "type": "object",
        "properties": {"greeting": {"type": "string", "x-mcp-header": "Greeting"}},
        "required": ["greeting"]
      })",
      .handler = [](const json::Value& args) {
        auto greeting = json::get_string(args, "greeting");
        if (!greeting) return mcp::tool_error("Missing required argument: greeting");
        return ex::text_result("Greeting received: " + std::string(*greeting));
      },
  });
}

}  // namespace mcpgw::examples::conformance
