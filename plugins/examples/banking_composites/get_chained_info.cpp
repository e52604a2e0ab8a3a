// get_chained_info (seed 002, "Composite Tools"): calls one tool of a
// chained server and returns its structured result, marked with where it
// came from. Structured content is preferred; a tool that only answers with
// JSON text works too (CallResult::structured falls back to it).
#include <chrono>
#include <ctime>

#include "composites.hpp"

namespace banking {
namespace {

std::string utc_now_iso8601() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

void add_get_chained_info(mcpgw::Plugin& plugin, const mcpgw::Json& config) {
  const std::string server = setting(config, "server", "bank");
  const std::string tool = setting(config, "tool", "list_accounts");
  plugin.tool("get_chained_info")
      .title("Get Chained Info")
      .description("Fetches " + tool + " from the " + server +
                   " server and returns its data with a source marker (and a timestamp on request).")
      .input_schema(mcpgw::Json::parse(R"json({
        "type": "object",
        "properties": {
          "arguments": {"type": "object", "description": "Passed to the chained tool unchanged"},
          "includeTimestamp": {"type": "boolean", "description": "Add the time of the call (UTC)"}
        },
        "additionalProperties": false
      })json"))
      .annotations(mcpgw::Json::object({{"readOnlyHint", true}}))
      .handler([server, tool](mcpgw::Context& ctx, const mcpgw::Json& args) {
        const mcpgw::Json& forwarded = args["arguments"];
        auto r = ctx.call_tool(server, tool, forwarded.is_object() ? forwarded : mcpgw::Json::object());
        if (r.is_error()) return mcpgw::ToolResult::error("Failed to get " + tool + " from " + server + ": " + r.text());
        mcpgw::Json data = r.structured();
        if (data.is_null()) return mcpgw::ToolResult::error(server + "/" + tool + " returned no structured data");
        auto out = mcpgw::Json::object({{"source", server + ":" + tool}, {"data", std::move(data)}});
        if (args["includeTimestamp"].as_bool()) out.set("timestamp", utc_now_iso8601());
        return mcpgw::ToolResult::ok(out);
      });
}

}  // namespace banking
