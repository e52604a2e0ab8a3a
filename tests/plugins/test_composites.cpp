// A plugin with one tool per host function and failure mode, for the
// gateway's plugin tests. Its config names the upstream it calls
// (`server`, default "toolbox").
#include <mcpgw/plugin.hpp>

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace {

mcpgw::Json object_schema(const char* properties_json) {
  return mcpgw::Json::object({{"type", "object"}, {"properties", mcpgw::Json::parse(properties_json)}});
}

}  // namespace

MCPGW_PLUGIN("test_composites", "0.1.0") {
  const std::string server = plugin.config()["server"].as_string("toolbox");
  plugin.log(mcpgw::LogLevel::Info, "calling server " + server);

  plugin.tool("whoami")
      .description("The principal and mode the gateway reports for this call.")
      .annotations(mcpgw::Json::object({{"readOnlyHint", true}}))
      .handler([](mcpgw::Context& ctx, const mcpgw::Json&) {
        return mcpgw::ToolResult::ok(mcpgw::Json::object({{"principal", ctx.principal()}, {"mode", ctx.mode()}}));
      });

  plugin.tool("relay")
      .description("Calls any upstream tool and returns its result unchanged.")
      .input_schema(object_schema(R"({"server":{"type":"string"},"tool":{"type":"string"},"arguments":{}})"))
      .slices({"relay"})
      .handler([](mcpgw::Context& ctx, const mcpgw::Json& args) {
        // Arguments that are not an object go through as they are, to show
        // what the host does with them.
        const mcpgw::Json& a = args["arguments"];
        return mcpgw::ToolResult::raw(
            ctx.call_tool(args["server"].as_string(), args["tool"].as_string(), a.is_null() ? mcpgw::Json::object() : a)
                .raw());
      });

  plugin.tool("reverse_relay")
      .description("Calls an upstream tool and returns the text of its result reversed, as the plugin saw it.")
      .input_schema(object_schema(R"({"server":{"type":"string"},"tool":{"type":"string"},"arguments":{}})"))
      .handler([](mcpgw::Context& ctx, const mcpgw::Json& args) {
        // Reversed, a secret no longer looks like one to the gateway's
        // detectors on the way out: what comes back is what the plugin got.
        const mcpgw::Json& a = args["arguments"];
        auto r = ctx.call_tool(args["server"].as_string(), args["tool"].as_string(),
                               a.is_null() ? mcpgw::Json::object() : a);
        std::string text = r.text();
        std::reverse(text.begin(), text.end());
        return mcpgw::ToolResult::ok(mcpgw::Json::object({{"reversed", text}, {"isError", r.is_error()}}));
      });

  plugin.tool("parallel_sleep")
      .description("Sleeps on two upstream calls at once and returns both results.")
      .input_schema(object_schema(R"({"ms":{"type":"integer"},"servers":{"type":"array"}})"))
      .handler([server](mcpgw::Context& ctx, const mcpgw::Json& args) {
        auto sleep = mcpgw::Json::object({{"ms", args["ms"].as_int(200)}});
        std::vector<mcpgw::ToolCall> calls;
        for (const auto& s : args["servers"].items()) calls.push_back({s.as_string(), "sleep", sleep});
        if (calls.empty()) calls = {{server, "sleep", sleep}, {server, "sleep", sleep}};
        mcpgw::Json out = mcpgw::Json::array();
        for (const auto& r : ctx.call_all(calls)) out.push_back(r.raw());
        return mcpgw::ToolResult::ok(mcpgw::Json::object({{"results", out}}));
      });

  plugin.tool("from_own_thread")
      .description("Calls echo from a thread the plugin starts, as the ABI allows.")
      .handler([server](mcpgw::Context& ctx, const mcpgw::Json&) {
        std::string text;
        std::thread t([&] { text = ctx.call_tool(server, "echo", mcpgw::Json::object({{"text", "from a plugin thread"}})).text(); });
        t.join();
        return mcpgw::ToolResult::text(text);
      });

  plugin.tool("abandon_async")
      .description("Starts a slow call and returns without waiting for it; the gateway must wait.")
      .handler([server](mcpgw::Context& ctx, const mcpgw::Json&) {
        auto ignored = ctx.call_tool_async(server, "sleep", mcpgw::Json::object({{"ms", 200}}));
        return mcpgw::ToolResult::text("returned before the call finished");
      });

  plugin.tool("until_cancelled")
      .description("Calls a long sleep upstream; the client's cancel must reach it, and cancelled() must say so.")
      .handler([server](mcpgw::Context& ctx, const mcpgw::Json&) {
        auto r = ctx.call_tool(server, "sleep", mcpgw::Json::object({{"ms", 60000}}));
        return mcpgw::ToolResult::ok(mcpgw::Json::object({{"cancelled", ctx.cancelled()}, {"upstream", r.raw()}}));
      });

  plugin.tool("handoff")
      .description("Returns nextTool {tool, arguments} for the gateway to resolve.")
      .input_schema(object_schema(R"({"tool":{"type":"string"},"arguments":{"type":"object"}})"))
      .handler([](mcpgw::Context&, const mcpgw::Json& args) {
        return mcpgw::ToolResult::next_tool(args["tool"].as_string(), args["arguments"], "handing off");
      });

  plugin.tool("throws")
      .description("A handler that throws std::runtime_error.")
      .handler([](mcpgw::Context&, const mcpgw::Json&) -> mcpgw::ToolResult {
        throw std::runtime_error("the handler broke");
      });

  plugin.tool("throws_int")
      .description("A handler that throws something that is not a std::exception.")
      .handler([](mcpgw::Context&, const mcpgw::Json&) -> mcpgw::ToolResult { throw 42; });

  plugin.tool("welcome")
      .description("A welcome tool from a plugin.")
      .meta("welcomeTool", true)
      .handler([](mcpgw::Context& ctx, const mcpgw::Json&) {
        return mcpgw::ToolResult::text("Welcome from a plugin, " + (ctx.principal().empty() ? std::string("guest") : ctx.principal()) + ".");
      });
}
