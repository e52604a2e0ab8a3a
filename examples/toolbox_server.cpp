// toolbox-server: a second upstream for the quick start and the test double
// of the gateway's tests. Each tool exercises one behaviour a proxy must get
// right: plain results, structured output, slow calls, tool errors, JSON-RPC
// errors, a crashing server, noise on stdout, large payloads and `_meta`
// pass-through.
#include <unistd.h>

#include <charconv>
#include <chrono>
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
      .description = "Waits `ms` milliseconds, then answers.",
      .input_schema = schema_with(R"("ms":{"type":"integer","minimum":0})", R"("ms")"),
      .handler = [](const json::Value& args) -> ex::ToolOutcome {
        auto ms = ex::get_int(args, "ms");
        if (!ms || *ms < 0) return mcp::tool_error("Argument ms must be a non-negative integer");
        std::this_thread::sleep_for(std::chrono::milliseconds(*ms));
        return ex::text_result("slept " + std::to_string(*ms) + " ms");
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
      .description = "Answers with a JSON-RPC error (-32000) instead of a result.",
      .handler = [](const json::Value&) -> ex::ToolOutcome {
        return ex::RpcError{-32000, "deliberate failure"};
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

bool parse_size(std::string_view s, std::size_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

int main(int argc, char** argv) {
  ex::Server server("toolbox-server", "0.1.0");
  add_tools(server);
  const std::vector<ex::Flag> flags = {
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
         return !v.empty();
       }},
  };
  return ex::run_main(server, argc, argv, flags);
}
