// A plugin that declares one tool name twice.
#include <mcpgw/plugin.hpp>

MCPGW_PLUGIN("duplicate_tool", "1.0.0") {
  auto answer = [](mcpgw::Context&, const mcpgw::Json&) { return mcpgw::ToolResult::text("twice"); };
  plugin.tool("twice").handler(answer);
  plugin.tool("twice").handler(answer);
}
