// A plugin whose tool names are taken: one by the example plugin, one by a
// proxied tool (toolbox:echo). Its third tool is unique and must be served.
#include <mcpgw/plugin.hpp>

MCPGW_PLUGIN("clash", "1.0.0") {
  auto from = [](std::string who) {
    return [who](mcpgw::Context&, const mcpgw::Json&) { return mcpgw::ToolResult::text("from the clash plugin: " + who); };
  };
  plugin.tool("get_chained_info").handler(from("get_chained_info"));
  plugin.tool("toolbox:echo").handler(from("toolbox:echo"));
  plugin.tool("clash_only").handler(from("clash_only"));
}
