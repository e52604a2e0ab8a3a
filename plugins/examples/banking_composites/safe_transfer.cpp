// safe_transfer: validates a transfer before the bank sees it, prepares it
// through the bank's prepare_money_transfer, and hands the conversation to a
// human agent (nextTool, resolved by the gateway) when policy forbids it:
// an amount over the limit, or a source account the bank reports locked.
#include <cmath>

#include "composites.hpp"

namespace banking {

void add_safe_transfer(mcpgw::Plugin& plugin, const mcpgw::Json& config) {
  const std::string server = setting(config, "server", "bank");
  const std::string handoff = setting(config, "handoff_tool", "bank:request_agent_handoff");
  const double limit = config["max_amount"].as_number(10000);
  if (!(limit > 0)) throw mcpgw::JsonError("safe_transfer.max_amount must be a positive number");

  plugin.tool("safe_transfer")
      .title("Safe Transfer")
      .description("Prepares a transfer between the customer's accounts after checking it against the bank's "
                   "policy; transfers over the limit or from a locked account go to a human agent.")
      .input_schema(mcpgw::Json::parse(R"json({
        "type": "object",
        "properties": {
          "fromAccountId": {"type": "string"},
          "toAccountId": {"type": "string"},
          "amount": {"type": "number", "description": "Amount in USD"},
          "memo": {"type": "string"}
        },
        "required": ["fromAccountId", "toAccountId", "amount"],
        "additionalProperties": false
      })json"))
      .slices({"transfer"})
      .handler([server, handoff, limit](mcpgw::Context& ctx, const mcpgw::Json& args) {
        const std::string from = args["fromAccountId"].as_string();
        const std::string to = args["toAccountId"].as_string();
        const double amount = args["amount"].as_number(-1);
        if (from.empty() || to.empty()) return mcpgw::ToolResult::error("fromAccountId and toAccountId are required");
        if (from == to) return mcpgw::ToolResult::error("The source and destination accounts are the same.");
        if (!(amount > 0) || std::round(amount * 100) != amount * 100)
          return mcpgw::ToolResult::error("The amount must be positive with at most two decimals.");
        if (amount > limit) {
          ctx.log(mcpgw::LogLevel::Info, "transfer of " + mcpgw::Json(amount).dump() + " by " +
                                             (ctx.principal().empty() ? "-" : ctx.principal()) + " over the limit");
          return mcpgw::ToolResult::next_tool(
              handoff,
              mcpgw::Json::object({{"reason", "Transfer of USD " + mcpgw::Json(amount).dump() + " from " + from +
                                                  " exceeds the USD " + mcpgw::Json(limit).dump() +
                                                  " limit for assistant-initiated transfers"}}),
              "Transfers over USD " + mcpgw::Json(limit).dump() + " need a customer service agent.");
        }

        auto prepared = ctx.call_tool(server, "prepare_money_transfer", args);
        // The bank's own handoff (a locked account) names its tool as the
        // bank knows it; the client knows it under the exposed name.
        const mcpgw::Json& next = prepared.raw()["_meta"]["nextTool"];
        if (next.is_object()) return mcpgw::ToolResult::next_tool(handoff, next["arguments"], prepared.text());
        if (prepared.is_error()) return mcpgw::ToolResult::error("The bank refused the transfer: " + prepared.text());
        return mcpgw::ToolResult::ok(prepared.structured(), prepared.text());
      });
}

}  // namespace banking
