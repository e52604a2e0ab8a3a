// toolbox-server: a second upstream for the quick start and the test double
// of the gateway's tests. Each tool exercises one behaviour a proxy must get
// right: plain results, structured output, slow calls, tool errors, JSON-RPC
// errors, a crashing server, noise on stdout, large payloads and `_meta`
// pass-through. Flags add fixtures for the gateway's own features:
// `--chain-tool NAME` a tool whose result asks for a next tool (nextTool
// chains; `--typed-chain-tool` / `--closed-chain-tool` the same with an
// outputSchema), `--welcome-tool NAME` a tool flagged `_meta.welcomeTool` (plus
// `welcome_calls`, which counts their calls).
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "mcp/protocol.hpp"
#include "server_kit.hpp"

namespace ex = mcpgw::examples;
namespace json = mcpgw::json;
namespace mcp = mcpgw::mcp;

namespace {

// Large enough for any test, small enough that a typo cannot exhaust memory.
constexpr std::int64_t kMaxBigBytes = std::int64_t{256} << 20;

std::string schema_with(std::string_view properties, std::string_view required) {
  return std::string(R"({"type":"object","properties":{)") + std::string(properties) +
         R"(},"required":[)" + std::string(required) + R"(],"additionalProperties":false})";
}

void add_tools(ex::Server& server) {
  server.add_tool({
      .name = "echo",
      .title = "Echo",
      .description = "Returns its text unchanged.",
      .input_schema = schema_with(R"("text":{"type":"string"})", R"("text")"),
      .handler = [](const json::Value& args) -> ex::ToolOutcome {
        auto text = json::get_string(args, "text");
        if (!text) return mcp::tool_error("Missing required argument: text");
        return ex::text_result(*text);
      },
  });
  server.add_tool({
      .name = "add",
      .title = "Add",
      .description = "Adds two numbers.",
      .input_schema = schema_with(R"("a":{"type":"number"},"b":{"type":"number"})", R"("a","b")"),
      .output_schema = R"({"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]})",
      .handler = [](const json::Value& args) -> ex::ToolOutcome {
        auto a = ex::get_number(args, "a");
        auto b = ex::get_number(args, "b");
        if (!a || !b) return mcp::tool_error("Arguments a and b must be numbers");
        json::Document r = ex::text_result(ex::format_number(*a + *b));
        // Integers stay integers on the wire: 2 + 3 is 5, not 5.0.
        auto ia = ex::get_int(args, "a");
        auto ib = ex::get_int(args, "b");
        json::Value sc(rapidjson::kObjectType);
        sc.AddMember("sum", ia && ib ? json::Value(*ia + *ib) : json::Value(*a + *b), r.GetAllocator());
        r.AddMember("structuredContent", sc, r.GetAllocator());
        return r;
      },
  });
  server.add_tool({
      .name = "sleep",
      .title = "Sleep",
      .description = "Waits `ms` milliseconds, then answers with when it started and ended (Unix ms), "
                     "so a caller can tell whether calls overlapped.",
      .input_schema = schema_with(R"("ms":{"type":"integer","minimum":0})", R"("ms")"),
      .handler = [](const json::Value& args) -> ex::ToolOutcome {
        auto ms = ex::get_int(args, "ms");
        if (!ms || *ms < 0) return mcp::tool_error("Argument ms must be a non-negative integer");
        // The system clock: comparable between processes, unlike a
        // process's own steady clock epoch.
        auto unix_ms = [] {
          return std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
        };
        double started = unix_ms();
        std::this_thread::sleep_for(std::chrono::milliseconds(*ms));
        double ended = unix_ms();
        json::Document r = ex::text_result("slept " + std::to_string(*ms) + " ms");
        json::Value sc(rapidjson::kObjectType);
        sc.AddMember("ms", *ms, r.GetAllocator());
        sc.AddMember("started_ms", started, r.GetAllocator());
        sc.AddMember("ended_ms", ended, r.GetAllocator());
        r.AddMember("structuredContent", sc, r.GetAllocator());
        return r;
      },
  });
  server.add_tool({
      .name = "fail",
      .title = "Fail",
      .description = "Returns a tool error (isError: true) carrying `message`.",
      .input_schema = schema_with(R"("message":{"type":"string"})", R"("message")"),
      .handler = [](const json::Value& args) {
        return mcp::tool_error(json::get_string(args, "message").value_or("failed"));
      },
  });
  server.add_tool({
      .name = "rpc_error",
      .title = "RPC Error",
      .description = "Answers with a JSON-RPC error (`code`, default -32000) instead of a result.",
      .input_schema = R"({"type":"object","properties":{"code":{"type":"integer"}}})",
      .handler = [](const json::Value& args) -> ex::ToolOutcome {
        return ex::RpcError{static_cast<int>(ex::get_int(args, "code").value_or(-32000)), "deliberate failure"};
      },
  });
  server.add_tool({
      .name = "crash",
      .title = "Crash",
      .description = "Exits the server process with status 3 without answering.",
      .handler = [](const json::Value&) -> ex::ToolOutcome { _exit(3); },
  });
  server.add_tool({
      .name = "pid",
      .title = "Process ID",
      .description = "Returns the server's process id, to tell server instances apart.",
      .annotations = R"({"readOnlyHint":true})",
      .handler = [](const json::Value&) { return ex::text_result(std::to_string(getpid())); },
  });
  server.add_tool({
      .name = "garbage",
      .title = "Garbage",
      .description = "Over stdio, writes a line that is not JSON before answering \"ok\".",
      .handler = [&server](const json::Value&) {
        server.write_raw_line("this is not json");
        return ex::text_result("ok");
      },
  });
  server.add_tool({
      .name = "big",
      .title = "Big",
      .description = "Returns a text of `bytes` 'x' characters.",
      .input_schema = schema_with(R"("bytes":{"type":"integer","minimum":0})", R"("bytes")"),
      .handler = [](const json::Value& args) -> ex::ToolOutcome {
        auto bytes = ex::get_int(args, "bytes");
        if (!bytes || *bytes < 0 || *bytes > kMaxBigBytes)
          return mcp::tool_error("Argument bytes must be an integer from 0 to " +
                                 std::to_string(kMaxBigBytes));
        return ex::text_result(std::string(static_cast<std::size_t>(*bytes), 'x'));
      },
  });
  server.add_tool({
      .name = "meta",
      .title = "Meta",
      .description = "Returns `_meta` and structuredContent, to check they pass through.",
      .annotations = R"({"readOnlyHint":true,"openWorldHint":false})",
      .meta = R"({"example/owner":"toolbox"})",
      .handler = [](const json::Value&) {
        json::Document r = ex::text_result("meta");
        ex::set_json(r, "structuredContent", R"({"k":1})");
        ex::set_json(r, "_meta", R"({"example/trace":"t-1"})");
        return r;
      },
  });
}

void add_generated(ex::Server& server, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    std::string name = "gen_" + std::to_string(i);
    server.add_tool({
        .name = name,
        .description = "Generated tool; returns its own name.",
        .handler = [name](const json::Value&) { return ex::text_result(name); },
    });
  }
}

// The chain fixture: answers `text` (default "chain") as content and
// structuredContent {text}, with isError when `is_error`, after `sleep_ms`;
// when `next` is given, `_meta.nextTool = {tool: next, arguments:
// next_arguments}` (`name` instead of `tool` with `use_name_key`, as one seed
// implementation spells it). Nested next_arguments build any chain:
//   {next: "chain", next_arguments: {text: "b", next: "echo", next_arguments: {text: "c"}}}
// Without next_arguments, the arguments of the next tool are this call's own
// arguments: {next: "chain"} asks for itself again (a cycle).
// `output_schema`, when given, is declared as the tool's outputSchema (the
// result conforms to both below): the typed chains validating clients check.
constexpr const char* kChainSchema =
    R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})";
constexpr const char* kClosedChainSchema =
    R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false})";

void add_chain_tool(ex::Server& server, const std::string& name, const char* output_schema = "") {
  server.add_tool({
      .name = name,
      .title = "Chain",
      .description = "Returns `text`; with `next`, asks for that tool to be called next (_meta.nextTool) "
                     "with `next_arguments` (default: its own arguments).",
      .input_schema = R"({"type":"object","properties":{"text":{"type":"string"},"next":{"type":"string"},)"
                      R"("next_arguments":{"type":"object"},"is_error":{"type":"boolean"},)"
                      R"("use_name_key":{"type":"boolean"},"sleep_ms":{"type":"integer","minimum":0}},)"
                      R"("additionalProperties":false})",
      .output_schema = output_schema,
      .handler = [](const json::Value& args) -> ex::ToolOutcome {
        if (auto ms = ex::get_int(args, "sleep_ms"); ms && *ms > 0)
          std::this_thread::sleep_for(std::chrono::milliseconds(*ms));
        const std::string text(json::get_string(args, "text").value_or("chain"));
        json::Document r = ex::text_result(text);
        auto& a = r.GetAllocator();
        const json::Value* is_error = json::find(args, "is_error");
        if (is_error && is_error->IsBool() && is_error->GetBool()) r.AddMember("isError", true, a);
        json::Value sc(rapidjson::kObjectType);
        sc.AddMember("text", json::str(text, a), a);
        r.AddMember("structuredContent", sc, a);
        if (auto next = json::get_string(args, "next")) {
          const json::Value* name_key = json::find(args, "use_name_key");
          const bool use_name = name_key && name_key->IsBool() && name_key->GetBool();
          json::Value nt(rapidjson::kObjectType);
          nt.AddMember(json::str(use_name ? "name" : "tool", a), json::str(*next, a), a);
          const json::Value* na = json::find(args, "next_arguments");
          nt.AddMember("arguments", json::copy(na ? *na : args, a), a);
          json::Value meta(rapidjson::kObjectType);
          meta.AddMember("nextTool", nt, a);
          r.AddMember("_meta", meta, a);
        }
        return r;
      },
  });
}

// Welcome fixtures: every `--welcome-tool NAME` adds a tool flagged
// `_meta.welcomeTool: true` answering "welcome from <--name>" (after
// `--welcome-sleep-ms`), and `welcome_calls` counts their calls.
struct WelcomeState {
  std::string server_name = "toolbox-server";
  std::atomic<std::int64_t> sleep_ms{0};
  std::atomic<std::int64_t> calls{0};
  bool counter_added = false;
};

void add_welcome_tool(ex::Server& server, const std::string& name, std::shared_ptr<WelcomeState> state) {
  if (!state->counter_added) {
    state->counter_added = true;
    server.add_tool({
        .name = "welcome_calls",
        .title = "Welcome Calls",
        .description = "Returns how many times the welcome tools of this server were called.",
        .handler = [state](const json::Value&) {
          return ex::text_result(std::to_string(state->calls.load()));
        },
    });
  }
  server.add_tool({
      .name = name,
      .title = "Welcome",
      .description = "Greets a new session (welcome tool).",
      .annotations = R"({"readOnlyHint":true})",
      .meta = R"({"welcomeTool":true})",
      .handler = [state](const json::Value&) {
        ++state->calls;
        if (auto ms = state->sleep_ms.load(); ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        return ex::text_result("welcome from " + state->server_name);
      },
  });
}

bool parse_size(std::string_view s, std::size_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

int main(int argc, char** argv) {
  ex::Server server("toolbox-server", "0.1.0");
  add_tools(server);
  auto welcome = std::make_shared<WelcomeState>();
  const std::vector<ex::Flag> flags = {
      {"--get-stream", "1: over HTTP, offer each session a GET stream (the kit does with subscriptions on)",
       [&](std::string_view v) {
         if (v != "0" && v != "1") return false;
         if (v == "1") server.enable_subscriptions();
         return true;
       }},
      {"--tools", "add N generated tools gen_0 .. gen_{N-1}",
       [&](std::string_view v) {
         std::size_t n = 0;
         if (!parse_size(v, n)) return false;
         add_generated(server, n);
         return true;
       }},
      {"--page-size", "tools per tools/list page (0 = all in one page)",
       [&](std::string_view v) {
         std::size_t n = 0;
         if (!parse_size(v, n)) return false;
         server.set_page_size(n);
         return true;
       }},
      {"--name", "serverInfo.name to report",
       [&](std::string_view v) {
         server.set_name(std::string(v));
         welcome->server_name = std::string(v);
         return !v.empty();
       }},
      {"--chain-tool", "add the chain fixture (nextTool) under this name, e.g. chain (repeatable)",
       [&](std::string_view v) {
         if (v.empty()) return false;
         add_chain_tool(server, std::string(v));
         return true;
       }},
      {"--typed-chain-tool", "the chain fixture with an outputSchema {text: string} open to more properties",
       [&](std::string_view v) {
         if (v.empty()) return false;
         add_chain_tool(server, std::string(v), kChainSchema);
         return true;
       }},
      {"--closed-chain-tool", "the chain fixture with an outputSchema {text: string} and no other property",
       [&](std::string_view v) {
         if (v.empty()) return false;
         add_chain_tool(server, std::string(v), kClosedChainSchema);
         return true;
       }},
      {"--welcome-tool", "add a tool of this name flagged _meta.welcomeTool, and welcome_calls (repeatable)",
       [&](std::string_view v) {
         if (v.empty()) return false;
         add_welcome_tool(server, std::string(v), welcome);
         return true;
       }},
      {"--welcome-sleep-ms", "welcome tools wait this long before answering",
       [&](std::string_view v) {
         std::size_t n = 0;
         if (!parse_size(v, n)) return false;
         welcome->sleep_ms = static_cast<std::int64_t>(n);
         return true;
       }},
  };
  return ex::run_main(server, argc, argv, flags);
}
