// banking_composites: the example plugin of gateway.yaml.example. Its config
// has one optional object per tool:
//
//   config:
//     get_chained_info: {server: bank, tool: list_accounts}
//     account_overview: {bank: {server: bank, tool: list_accounts},
//                        fx: {server: rates, tool: get_exchange_rates}}
//     safe_transfer: {server: bank, max_amount: 10000,
//                     handoff_tool: "bank:request_agent_handoff"}
#include "composites.hpp"

MCPGW_PLUGIN("banking_composites", "1.0.0") {
  const mcpgw::Json& config = plugin.config();
  banking::add_get_chained_info(plugin, config["get_chained_info"]);
  banking::add_account_overview(plugin, config["account_overview"]);
  banking::add_safe_transfer(plugin, config["safe_transfer"]);
}

namespace banking {

std::string setting(const mcpgw::Json& config, const char* key, const char* def) {
  const mcpgw::Json& v = config[key];
  if (v.is_null()) return def;
  if (!v.is_string()) throw mcpgw::JsonError(std::string("setting ") + key + " must be a string, got " + v.dump());
  return v.as_string();
}

}  // namespace banking
