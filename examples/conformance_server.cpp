// conformance-server: the MCP server the official conformance suite
// (@modelcontextprotocol/conformance, server mode) expects to find behind the
// URL it tests. The suite calls fixed tool, resource and prompt names and
// checks their answers, so every name and value below is one a scenario
// checks (or the canonical value its description gives).
//
// Served alone (`--http 0`, with `--era 2026|both` for the 2026-07-28
// scenarios) it checks the server kit's protocol handling; behind the
// gateway (stdio, `prefix: false`) it checks what mcpgw passes through. The
// tools that ask the client for input do it through CallContext::request,
// so the same code answers mid-call (stateful era) and with input_required
// (stateless era). See tests/conformance/README.md.
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "mcp/protocol.hpp"
#include "conformance_fixture.hpp"
#include "server_kit.hpp"
#include "util/thread_annotations.hpp"

namespace ex = mcpgw::examples;
namespace json = mcpgw::json;
namespace mcp = mcpgw::mcp;
namespace util = mcpgw::util;
using namespace std::chrono_literals;

namespace mcpgw::examples::conformance {

/// A 1x1 red PNG (RGB, 8 bits): the smallest image every decoder accepts.
constexpr std::string_view kPngBase64 =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";
/// A WAV file holding one silent sample (PCM, 8 kHz, mono, 16 bits).
constexpr std::string_view kWavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==";

constexpr std::string_view kWatchedUri = "test://watched-resource";

std::string quote(std::string_view s) { return json::quote(s); }

std::string image_item() {
  return R"({"type":"image","data":")" + std::string(kPngBase64) + R"(","mimeType":"image/png"})";
}

std::string text_item(std::string_view text) { return R"({"type":"text","text":)" + quote(text) + "}"; }

std::string embedded_text_item(std::string_view uri, std::string_view mime, std::string_view text) {
  return R"({"type":"resource","resource":{"uri":)" + quote(uri) + R"(,"mimeType":)" + quote(mime) +
         R"(,"text":)" + quote(text) + "}}";
}

/// A CallToolResult with the given content items (JSON texts).
json::Document content_result(const std::vector<std::string>& items) {
  std::string text = R"({"content":[)";
  for (std::size_t i = 0; i < items.size(); ++i) text += (i ? "," : "") + items[i];
  return ex::parse_json(text + "]}");
}

/// A GetPromptResult whose messages all come from the user, one per content item.
json::Document prompt_result(const std::vector<std::string>& contents) {
  std::string text = R"({"messages":[)";
  for (std::size_t i = 0; i < contents.size(); ++i)
    text += std::string(i ? "," : "") + R"({"role":"user","content":)" + contents[i] + "}";
  return ex::parse_json(text + "]}");
}

/// A ReadResourceResult with one text item.
json::Document text_contents(std::string_view uri, std::string_view mime, std::string_view text) {
  return ex::parse_json(R"({"contents":[{"uri":)" + quote(uri) + R"(,"mimeType":)" + quote(mime) +
                        R"(,"text":)" + quote(text) + "}]}");
}

// ---------------------------------------------------------------------------
// Tools


/// "action=accept, content={...}" for an ElicitResult.
std::string elicit_summary(const json::Value& result) {
  const json::Value* content = json::find(result, "content");
  return "action=" + std::string(json::get_string(result, "action").value_or("?")) +
         ", content=" + (content ? json::write(*content) : std::string("{}"));
}

/// The text of a CreateMessageResult: `content` is one block, or (since
/// 2025-11-25) may be a list of them.
std::string sampled_text(const json::Value& result) {
  const json::Value* content = json::find(result, "content");
  if (content && content->IsArray()) {
    for (const auto& item : content->GetArray())
      if (auto text = json::get_string(item, "text")) return std::string(*text);
  } else if (content) {
    if (auto text = json::get_string(*content, "text")) return std::string(*text);
  }
  return "(no text in the sampling result)";
}

constexpr const char* kSep1034Schema = R"json({
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "User name", "default": "John Doe"},
    "age": {"type": "integer", "description": "User age", "default": 30},
    "score": {"type": "number", "description": "User score", "default": 95.5},
    "status": {"type": "string", "description": "User status",
               "enum": ["active", "inactive", "pending"], "default": "active"},
    "verified": {"type": "boolean", "description": "Verification status", "default": true}
  },
  "required": []
})json";

// The five enum shapes of SEP-1330: untitled and titled single-select, the
// deprecated enumNames form, untitled and titled multi-select.
constexpr const char* kSep1330Schema = R"json({
  "type": "object",
  "properties": {
    "untitledSingle": {"type": "string", "description": "Select one option",
                       "enum": ["option1", "option2", "option3"]},
    "titledSingle": {"type": "string", "description": "Select one option with titles",
                     "oneOf": [{"const": "value1", "title": "First Option"},
                               {"const": "value2", "title": "Second Option"},
                               {"const": "value3", "title": "Third Option"}]},
    "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                   "enum": ["opt1", "opt2", "opt3"],
                   "enumNames": ["Option One", "Option Two", "Option Three"]},
    "untitledMulti": {"type": "array", "description": "Select multiple options",
                      "minItems": 1, "maxItems": 3,
                      "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
    "titledMulti": {"type": "array", "description": "Select multiple options with titles",
                    "minItems": 1, "maxItems": 3,
                    "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                        {"const": "value2", "title": "Second Choice"},
                                        {"const": "value3", "title": "Third Choice"}]}}
  },
  "required": []
})json";

// SEP-1613 and SEP-2106: the JSON Schema 2020-12 keywords a proxy must pass
// through untouched ($schema, $defs, $anchor, $ref, allOf/anyOf,
// if/then/else, additionalProperties).
constexpr const char* kJsonSchema2020_12 = R"json({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
})json";

json::Document elicitation_params(std::string_view message, std::string_view schema) {
  json::Document params = ex::parse_json(R"({"message":)" + quote(message) + "}");
  ex::set_json(params, "requestedSchema", schema);
  return params;
}

void add_content_tools(ex::Server& server) {
  server.add_tool({
      .name = "test_simple_text",
      .description = "Returns one text item.",
      .handler = [](const json::Value&) { return ex::text_result("This is a simple text response for testing."); },
  });
  server.add_tool({
      .name = "test_image_content",
      .description = "Returns one image item (a 1x1 PNG).",
      .handler = [](const json::Value&) { return content_result({image_item()}); },
  });
  server.add_tool({
      .name = "test_audio_content",
      .description = "Returns one audio item (a one-sample WAV).",
      .handler = [](const json::Value&) {
        return content_result({R"({"type":"audio","data":")" + std::string(kWavBase64) + R"(","mimeType":"audio/wav"})"});
      },
  });
  server.add_tool({
      .name = "test_embedded_resource",
      .description = "Returns one embedded text resource.",
      .handler = [](const json::Value&) {
        return content_result({embedded_text_item("test://embedded-resource", "text/plain",
                                                  "This is an embedded resource content.")});
      },
  });
  server.add_tool({
      .name = "test_multiple_content_types",
      .description = "Returns a text, an image and an embedded resource.",
      .handler = [](const json::Value&) {
        return content_result({text_item("Multiple content types test:"), image_item(),
                               embedded_text_item("test://mixed-content-resource", "application/json",
                                                  R"({"test":"data","value":123})")});
      },
  });
  server.add_tool({
      .name = "test_error_handling",
      .description = "Always fails with a tool error (isError: true).",
      .handler = [](const json::Value&) {
        return mcp::tool_error("This tool intentionally returns an error for testing");
      },
  });
  server.add_tool({
      .name = "json_schema_2020_12_tool",
      .description = "Tool with JSON Schema 2020-12 features ($schema, $defs, $anchor, $ref, allOf/anyOf, "
                     "if/then/else, additionalProperties).",
      .input_schema = kJsonSchema2020_12,
      .handler = [](const json::Value& args) {
        return ex::text_result("JSON Schema 2020-12 tool called with: " + json::write(args));
      },
  });
  server.add_tool({
      .name = "test_reconnection",
      .description = "Answers after a short pause. The suite's SSE-polling scenario calls it; this "
                     "server keeps no event history, so it never closes a stream mid-call and "
                     "answers on the original request.",
      .handler = [](const json::Value&) {
        std::this_thread::sleep_for(100ms);
        return ex::text_result("Reconnection test completed successfully.");
      },
  });
}

/// `mid_call_only` (set by --mid-call-only before serving): the tools that
/// ask the client fail in the stateless era.
void add_talking_tools(ex::Server& server, const bool& mid_call_only) {
  server.add_tool({
      .name = "test_tool_with_logging",
      .description = "Sends three info log messages 50 ms apart while it runs.",
      .context_handler = [](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        ctx.log(ex::LogLevel::Info, "Tool execution started");
        std::this_thread::sleep_for(50ms);
        ctx.log(ex::LogLevel::Info, "Tool processing data");
        std::this_thread::sleep_for(50ms);
        ctx.log(ex::LogLevel::Info, "Tool execution completed");
        return ex::text_result("Tool with logging executed successfully");
      },
  });
  server.add_tool({
      .name = "test_tool_with_progress",
      .description = "Reports progress 0, 50 and 100 of 100, 50 ms apart, when the call carries a progress token.",
      .context_handler = [](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        for (int step : {0, 50, 100}) {
          if (step) std::this_thread::sleep_for(50ms);
          ctx.progress(step, 100, "Completed step " + std::to_string(step) + " of 100");
        }
        return ex::text_result(ctx.has_progress_token() ? "Progress reported: 0, 50, 100 of 100"
                                                        : "Done (no progress token given)");
      },
  });
  server.add_tool({
      .name = "test_sampling",
      .description = "Asks the client for an LLM completion of `prompt` (sampling/createMessage).",
      .input_schema = R"({"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]})",
      .context_handler = [&mid_call_only](const json::Value& args, ex::CallContext& ctx) -> ex::ToolOutcome {
        auto prompt = json::get_string(args, "prompt");
        if (!prompt) return mcp::tool_error("Missing required argument: prompt");
        json::Document params = ex::parse_json(R"({"messages":[{"role":"user","content":)" +
                                               text_item(*prompt) + R"(}],"maxTokens":100})");
        return ask_client(ctx, "llm_response", "sampling/createMessage", params, [](const json::Value& r) {
          return "LLM response: " + sampled_text(r);
        }, mid_call_only);
      },
  });
  server.add_tool({
      .name = "test_elicitation",
      .description = "Asks the user for a username and an email address (elicitation/create) showing `message`.",
      .input_schema = R"({"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]})",
      .context_handler = [&mid_call_only](const json::Value& args, ex::CallContext& ctx) -> ex::ToolOutcome {
        auto message = json::get_string(args, "message");
        if (!message) return mcp::tool_error("Missing required argument: message");
        json::Document params = elicitation_params(*message, R"({
          "type": "object",
          "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
          },
          "required": ["username", "email"]
        })");
        return ask_client(ctx, "user_details", "elicitation/create", params, [](const json::Value& r) {
          return "User response: " + elicit_summary(r);
        }, mid_call_only);
      },
  });
  server.add_tool({
      .name = "test_elicitation_sep1034_defaults",
      .description = "Elicits a form whose string, integer, number, enum and boolean fields have defaults (SEP-1034).",
      .context_handler = [&mid_call_only](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        json::Document params =
            elicitation_params("Please review and update the form fields with defaults", kSep1034Schema);
        return ask_client(ctx, "defaults_form", "elicitation/create", params, [](const json::Value& r) {
          return "Elicitation completed: " + elicit_summary(r);
        }, mid_call_only);
      },
  });
  server.add_tool({
      .name = "test_elicitation_sep1330_enums",
      .description = "Elicits a form with the five enum schema variants of SEP-1330.",
      .context_handler = [&mid_call_only](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        json::Document params = elicitation_params("Please select options from the enum fields", kSep1330Schema);
        return ask_client(ctx, "enum_form", "elicitation/create", params, [](const json::Value& r) {
          return "Elicitation completed: " + elicit_summary(r);
        }, mid_call_only);
      },
  });
}


// ---------------------------------------------------------------------------
// Resources, prompts, completion

/// test://watched-resource: its content changes on a timer, and subscribers
/// hear of each change through notifications/resources/updated.
class WatchedResource {
 public:
  std::string content() const { return "Watched resource content, version " + std::to_string(version_.load()); }
  void change() { ++version_; }

 private:
  std::atomic<int> version_{1};
};

void add_resources(ex::Server& server, WatchedResource& watched) {
  server.add_resource({
      .uri = "test://static-text",
      .name = "static-text",
      .title = "Static Text Resource",
      .description = "A static text resource for testing",
      .mime_type = "text/plain",
      .read = [](std::string_view uri) {
        return text_contents(uri, "text/plain", "This is the content of the static text resource.");
      },
  });
  server.add_resource({
      .uri = "test://static-binary",
      .name = "static-binary",
      .title = "Static Binary Resource",
      .description = "A static binary resource (a 1x1 PNG) for testing",
      .mime_type = "image/png",
      .read = [](std::string_view uri) {
        return ex::parse_json(R"({"contents":[{"uri":)" + quote(uri) + R"(,"mimeType":"image/png","blob":")" +
                              std::string(kPngBase64) + R"("}]})");
      },
  });
  server.add_resource({
      .uri = std::string(kWatchedUri),
      .name = "watched-resource",
      .title = "Watched Resource",
      .description = "A resource whose content changes on a timer; subscribe to hear of it",
      .mime_type = "text/plain",
      .read = [&watched](std::string_view uri) { return text_contents(uri, "text/plain", watched.content()); },
  });
  server.add_resource_template({
      .uri_template = "test://template/{id}/data",
      .name = "template",
      .title = "Resource Template",
      .description = "A resource template with parameter substitution",
      .mime_type = "application/json",
      .read = [](std::string_view uri, const ex::TemplateVars& vars) {
        const std::string& id = vars.at("id");
        return text_contents(uri, "application/json",
                             R"({"id":)" + quote(id) + R"(,"templateTest":true,"data":)" +
                                 quote("Data for ID: " + id) + "}");
      },
  });
  server.enable_subscriptions();
}

void add_prompts(ex::Server& server, DynamicLists& lists) {
  server.add_prompt({
      .name = "test_simple_prompt",
      .title = "Simple Test Prompt",
      .description = "A simple prompt without arguments",
      .get = [](const ex::PromptArgs&) { return prompt_result({text_item("This is a simple prompt for testing.")}); },
  });
  server.add_prompt({
      .name = "test_prompt_with_arguments",
      .title = "Prompt With Arguments",
      .description = "A prompt with required arguments",
      .arguments = {{.name = "arg1", .description = "First test argument", .required = true},
                    {.name = "arg2", .description = "Second test argument", .required = true}},
      .get = [](const ex::PromptArgs& args) {
        return prompt_result({text_item("Prompt with arguments: arg1='" + args.at("arg1") + "', arg2='" +
                                        args.at("arg2") + "'")});
      },
  });
  server.add_prompt({
      .name = "test_prompt_with_embedded_resource",
      .title = "Prompt With Embedded Resource",
      .description = "A prompt that includes an embedded resource",
      .arguments = {{.name = "resourceUri", .description = "URI of the resource to embed", .required = true}},
      .get = [](const ex::PromptArgs& args) {
        return prompt_result({embedded_text_item(args.at("resourceUri"), "text/plain",
                                                 "Embedded resource content for testing."),
                              text_item("Please process the embedded resource above.")});
      },
  });
  server.add_prompt({
      .name = "test_prompt_with_image",
      .title = "Prompt With Image",
      .description = "A prompt that includes image content",
      .get = [](const ex::PromptArgs&) {
        return prompt_result({image_item(), text_item("Please analyze the image above.")});
      },
  });
  server.add_prompt({
      .name = "test_input_required_result_prompt",
      .title = "Prompt Asking For Input",
      .description = "A prompt that asks the user for its context (elicitation, input key user_context) first",
      .context_get = [](const ex::PromptArgs&, ex::CallContext& ctx) -> ex::Outcome {
        ex::Outcome answer = ctx.request(
            "elicitation/create",
            elicitation_params("What context should the prompt use?",
                   R"({"type":"object","properties":{"context":{"type":"string"}},"required":["context"]})"),
            "user_context");
        if (auto* err = std::get_if<ex::RpcError>(&answer)) return std::move(*err);
        return prompt_result({text_item("Answer with this context in mind: " +
                                        accepted_field(std::get<json::Document>(answer), "context"))});
      },
  });
  server.add_prompt(lists.dynamic_prompt(1));
}

/// Suggestions per argument name (the names are unique across this server's
/// prompts and template), filtered by what the user has typed so far.
std::vector<std::string> complete(const json::Value&, std::string_view argument, std::string_view typed) {
  static const std::map<std::string_view, std::vector<std::string>> kSuggestions = {
      {"arg1", {"paris", "park", "party"}},
      {"arg2", {"hello", "world"}},
      {"resourceUri", {"test://static-text", "test://static-binary", std::string(kWatchedUri)}},
      {"id", {"123", "456", "789"}},
  };
  std::vector<std::string> out;
  if (auto it = kSuggestions.find(argument); it != kSuggestions.end())
    for (const std::string& s : it->second)
      if (s.starts_with(typed)) out.push_back(s);
  return out;
}

}  // namespace mcpgw::examples::conformance

using namespace mcpgw::examples::conformance;

int main(int argc, char** argv) {
  ex::Server server("mcpgw-conformance-server", "0.1.0");
  server.set_instructions("Fixture of the MCP conformance suite: every tool, prompt and resource here is one a "
                          "scenario calls.");
  WatchedResource watched;
  DynamicLists lists(server);
  add_content_tools(server);
  bool mid_call_only = false;
  add_talking_tools(server, mid_call_only);
  add_stateless_tools(server, lists);
  add_task_tools(server);
  add_resources(server, watched);
  add_prompts(server, lists);
  server.set_completion_handler(complete);
  server.enable_logging();

  std::chrono::milliseconds watch_interval = 1000ms;
  server.run_while_serving([&](std::stop_token stop) {
    if (watch_interval == 0ms) return;
    util::Mutex mutex;
    std::condition_variable_any cv;
    util::UniqueLock lock(mutex);
    // Wakes early only to stop.
    while (!cv.wait_for(lock, stop, watch_interval, [] { return false; }) && !stop.stop_requested()) {
      watched.change();
      server.notify_resource_updated(kWatchedUri);
    }
  });

  const std::vector<ex::Flag> flags = {
      {"--mid-call-only", "1: the tools that ask the client fail in protocol 2026-07-28 (they ask mid-call only)",
       [&](std::string_view v) {
         if (v != "0" && v != "1") return false;
         mid_call_only = v == "1";
         return true;
       }},
      {"--watch-interval-ms", "how often test://watched-resource changes (0 = never; default 1000)",
       [&](std::string_view v) {
         int ms = -1;
         auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), ms);
         if (ec != std::errc() || p != v.data() + v.size() || ms < 0) return false;
         watch_interval = std::chrono::milliseconds(ms);
         return true;
       }},
  };
  return ex::run_main(server, argc, argv, flags);
}
