// account_overview: asks the bank for the accounts and the rates server for
// exchange rates at the same time (Context::call_all), then merges both into
// one answer with each account's balance in the currency the client asks for.
// When one side fails the other still answers: `partial` is true and
// `failed` says which side, which server and why.
#include <cmath>

#include "composites.hpp"

namespace banking {
namespace {

struct Side {
  std::string name, server, tool;
  mcpgw::Json arguments;
};

Side side_from(const mcpgw::Json& config, const char* name, const char* server, const char* tool) {
  const mcpgw::Json& c = config[name];
  mcpgw::Json arguments = c["arguments"].is_object() ? c["arguments"] : mcpgw::Json::object();
  return {name, setting(c, "server", server), setting(c, "tool", tool), std::move(arguments)};
}

double round_cents(double v) { return std::round(v * 100) / 100; }

}  // namespace

void add_account_overview(mcpgw::Plugin& plugin, const mcpgw::Json& config) {
  const Side bank = side_from(config, "bank", "bank", "list_accounts");
  const Side fx = side_from(config, "fx", "rates", "get_exchange_rates");
  plugin.tool("account_overview")
      .title("Account Overview")
      .description("Every account with its balance, converted to one currency, from the " + bank.server + " and " +
                   fx.server + " servers in one call.")
      .input_schema(mcpgw::Json::parse(R"json({
        "type": "object",
        "properties": {"currency": {"type": "string", "description": "ISO code to convert balances to (default USD)"}},
        "additionalProperties": false
      })json"))
      .annotations(mcpgw::Json::object({{"readOnlyHint", true}}))
      .slices({"read"})
      .handler([bank, fx](mcpgw::Context& ctx, const mcpgw::Json& args) {
        const std::string currency = args["currency"].as_string("USD");
        auto results = ctx.call_all({{bank.server, bank.tool, bank.arguments}, {fx.server, fx.tool, fx.arguments}});

        auto out = mcpgw::Json::object();
        mcpgw::Json failed = mcpgw::Json::array();
        const Side* sides[] = {&bank, &fx};
        for (std::size_t i = 0; i < 2; ++i) {
          if (results[i].is_error()) {
            failed.push_back(mcpgw::Json::object(
                {{"side", sides[i]->name}, {"server", sides[i]->server}, {"error", results[i].text()}}));
            out.set(sides[i]->name, nullptr);
          } else {
            out.set(sides[i]->name, results[i].structured());
          }
        }
        if (failed.size() == 2)
          return mcpgw::ToolResult::error("Both sides failed: " + results[0].text() + "; " + results[1].text());

        // The merge: balances in the requested currency, when both sides
        // gave what it needs.
        // Read through a const view: a non-const [] would insert members.
        const mcpgw::Json& merged = out;
        const mcpgw::Json& accounts = merged[bank.name]["accounts"];
        const mcpgw::Json& rates = merged[fx.name]["rates"];
        std::string summary;
        if (accounts.is_array() && rates.is_object()) {
          double rate = currency == merged[fx.name]["base"].as_string("USD") ? 1.0 : rates[currency].as_number(0);
          if (rate <= 0) return mcpgw::ToolResult::error("No exchange rate for " + currency);
          double total = 0;
          for (const auto& a : accounts.items()) total += a["balance"].as_number();
          out.set("total", mcpgw::Json::object({{"currency", currency}, {"amount", round_cents(total * rate)}}));
          summary = std::to_string(accounts.size()) + " accounts, " + currency + " " +
                    mcpgw::Json(round_cents(total * rate)).dump() + " in total";
        }
        for (const auto& f : failed.items())
          summary += (summary.empty() ? "" : "\n") + std::string("Partial answer: the ") + f["side"].as_string() +
                     " side (server " + f["server"].as_string() + ") failed: " + f["error"].as_string();
        out.set("partial", !failed.empty());
        out.set("failed", std::move(failed));
        return mcpgw::ToolResult::ok(out, summary.empty() ? out.dump() : summary);
      });
}

}  // namespace banking
