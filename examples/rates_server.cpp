// rates-server: a second upstream for the banking example. It quotes fixed
// exchange rates, so the account_overview composite has two servers to call
// in parallel and merge (plugins/examples/banking_composites).
#include <array>
#include <string>

#include "mcp/protocol.hpp"
#include "server_kit.hpp"

namespace ex = mcpgw::examples;
namespace json = mcpgw::json;
namespace mcp = mcpgw::mcp;

namespace {

struct Rate {
  const char* currency;
  double per_usd;
};

// Fixed, so answers are reproducible; a real server would fetch them.
constexpr std::array<Rate, 5> kRates{{{"USD", 1.0}, {"EUR", 0.92}, {"GBP", 0.79}, {"JPY", 151.4}, {"CHF", 0.88}}};

const Rate* find(std::string_view currency) {
  for (const auto& r : kRates)
    if (currency == r.currency) return &r;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  ex::Server server("rates-server", "0.1.0");
  server.add_tool({
      .name = "get_exchange_rates",
      .title = "Get Exchange Rates",
      .description = "Exchange rates from one base currency to USD, EUR, GBP, JPY and CHF.",
      .input_schema = R"({"type": "object", "properties": {"base": {"type": "string", "description": "ISO code, default USD"}},
                          "additionalProperties": false})",
      .output_schema = R"({"type": "object", "properties": {"base": {"type": "string"},
                           "rates": {"type": "object", "additionalProperties": {"type": "number"}}},
                           "required": ["base", "rates"]})",
      .annotations = R"({"readOnlyHint": true})",
      .handler = [](const json::Value& args) -> ex::ToolOutcome {
        std::string base(json::get_string(args, "base").value_or("USD"));
        const Rate* b = find(base);
        if (!b) return mcp::tool_error("Unknown currency: " + base);
        json::Document r = ex::text_result("");
        auto& a = r.GetAllocator();
        json::Value rates(rapidjson::kObjectType);
        std::string text = "1 " + base + " =";
        for (const auto& q : kRates) {
          double v = q.per_usd / b->per_usd;
          rates.AddMember(json::str(q.currency, a), json::Value(v), a);
          text += " " + ex::format_number(v) + " " + q.currency + ",";
        }
        text.pop_back();
        r["content"][0]["text"].SetString(text.c_str(), static_cast<rapidjson::SizeType>(text.size()), a);
        json::Value sc(rapidjson::kObjectType);
        sc.AddMember("base", json::str(base, a), a);
        sc.AddMember("rates", rates, a);
        r.AddMember("structuredContent", sc, a);
        return r;
      },
  });
  return ex::run_main(server, argc, argv);
}
