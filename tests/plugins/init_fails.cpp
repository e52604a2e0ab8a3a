// A plugin whose set-up refuses its configuration.
#include <mcpgw/plugin.hpp>

#include <stdexcept>

MCPGW_PLUGIN("init_fails", "1.0.0") {
  if (!plugin.config().contains("region")) throw std::runtime_error("the setting \"region\" is required");
  plugin.tool("never_listed").handler([](mcpgw::Context&, const mcpgw::Json&) { return mcpgw::ToolResult::text(""); });
}
