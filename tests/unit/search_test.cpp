#include <doctest/doctest.h>

#include "catalog/tool_search.hpp"
#include "search/index.hpp"

using namespace mcpgw::search;
namespace json = mcpgw::json;
using Terms = std::vector<std::string>;

TEST_CASE("search: the tokenizer splits identifiers and sentences") {
  CHECK(tokenize("bank:get_account_balance") == Terms{"bank", "get", "account", "balanc"});
  CHECK(tokenize("getAccountBalance") == Terms{"get", "account", "balanc"});
  CHECK(tokenize("getHTTPStatus") == Terms{"get", "http", "status"});
  CHECK(tokenize("HTTPServer2Go") == Terms{"http", "server2", "go"});
  CHECK(tokenize("trigger-long-running-operation") == Terms{"trigger", "long", "run", "operation"});
  CHECK(tokenize("toolbox__echo.v2") == Terms{"toolbox", "echo", "v2"});
  // Stop words go; tool verbs stay.
  CHECK(tokenize("What is the balance of my savings?") == Terms{"balanc", "sav"});
  CHECK(tokenize("list all the accounts") == Terms{"list", "all", "account"});
  CHECK(tokenize("") == Terms{});
  CHECK(tokenize("  ,;: ") == Terms{});
  // Bytes outside ASCII belong to words (no splitting inside UTF-8).
  CHECK(tokenize("Überweisung senden") == Terms{"Überweisung", "senden"});
}

TEST_CASE("search: stems of the same word agree") {
  CHECK(stem("balance") == stem("balances"));
  CHECK(stem("transfer") == stem("transferring"));
  CHECK(stem("transfer") == stem("transferred"));
  CHECK(stem("transfer") == stem("transfers"));
  CHECK(stem("create") == stem("created"));
  CHECK(stem("create") == stem("creating"));
  CHECK(stem("entry") == stem("entries"));
  CHECK(stem("add") == stem("added"));
  CHECK(stem("run") == stem("running"));
  CHECK(stem("call") == stem("calling"));
  // Short words and words that only look plural stay.
  CHECK(stem("sum") == "sum");
  CHECK(stem("status") == "status");
  CHECK(stem("save") == stem("savings"));
  CHECK(stem("analysis") == "analysis");
  CHECK(stem("address") == "address");
}

namespace {
std::vector<Document> bank_docs() {
  return {
      {"bank:list_accounts", "List Accounts", "Lists the customer's accounts with type, balance and lock state.", ""},
      {"bank:get_account_balance", "Get Account Balance", "Returns the current balance of one account.",
       "accountId e.g. acc_savings_001"},
      {"bank:prepare_money_transfer", "Prepare Money Transfer", "Prepares a transfer between accounts.",
       "fromAccountId Account to transfer from toAccountId Account to transfer to amount Amount in USD"},
      {"rates:get_exchange_rates", "", "Exchange rates from one base currency to USD, EUR and GBP.",
       "base ISO code, default USD"},
      {"toolbox:echo", "Echo", "Returns its text unchanged.", "text"},
  };
}
auto all = [](std::size_t) { return true; };
}  // namespace

TEST_CASE("search: BM25 ranks the tool whose name and text match best first") {
  Index idx(bank_docs());
  CHECK(idx.size() == 5);
  auto hits = idx.search("account balance", 8, all);
  REQUIRE(hits.size() >= 2);
  CHECK(hits[0].doc == 1);
  for (std::size_t i = 1; i < hits.size(); ++i) CHECK(hits[i - 1].score >= hits[i].score);
  CHECK(idx.search("send money", 8, all).at(0).doc == 2);
  CHECK(idx.search("currency exchange", 8, all).at(0).doc == 3);
  CHECK(idx.search("echo my text back", 8, all).at(0).doc == 4);
  // A parameter's name is found too, with less weight than a name.
  CHECK(idx.search("ISO", 8, all).at(0).doc == 3);
}

TEST_CASE("search: limit, visibility, unknown words and prefixes") {
  Index idx(bank_docs());
  CHECK(idx.search("account", 1, all).size() == 1);
  CHECK(idx.search("account", 0, all).empty());
  // Invisible documents are never returned, whatever their score.
  auto hidden = idx.search("account balance", 8, [](std::size_t d) { return d != 1; });
  for (const auto& h : hidden) CHECK(h.doc != 1);
  CHECK(idx.search("zebra quantum", 8, all).empty());
  CHECK_FALSE(idx.understands("zebra quantum"));
  CHECK_FALSE(idx.understands("what is the"));
  CHECK_FALSE(idx.understands(""));
  CHECK(idx.understands("balance"));
  // "excha" is nobody's word but begins "exchang".
  CHECK(idx.understands("excha"));
  CHECK(idx.search("excha", 8, all).at(0).doc == 3);
  // Too short to stand for the words it begins.
  CHECK(idx.search("ex", 8, all).empty());
  // Ties keep document order.
  Index same({{"a:x", "", "same words", ""}, {"b:y", "", "same words", ""}});
  auto tie = same.search("same words", 8, all);
  REQUIRE(tie.size() == 2);
  CHECK(tie[0].doc == 0);
  CHECK(tie[1].doc == 1);
}

TEST_CASE("search: hostile queries and an empty index") {
  Index empty(std::vector<Document>{});
  CHECK(empty.search("anything", 8, all).empty());
  Index idx(bank_docs());
  // A huge query costs its first terms only, and still finds.
  std::string huge;
  for (int i = 0; i < 100000; ++i) huge += "w" + std::to_string(i) + " ";
  huge += "balance";
  CHECK(idx.search(huge, 8, all).empty());  // "balance" is past the first 32 terms
  CHECK(idx.search("balance " + huge, 8, all).at(0).doc == 1);
  std::string binary("\0\xff\xfe\x01 balance", 10);
  CHECK(idx.search(binary, 8, all).at(0).doc == 1);
}

TEST_CASE("search: what the catalog indexes of a tool") {
  auto def = json::parse(R"({"name":"get_x","description":"Gets x.","annotations":{"title":"Get X"},
    "inputSchema":{"type":"object","properties":{"xId":{"type":"string","description":"Which x"},
      "filter":{"type":"object","properties":{"since":{"type":"string","description":"From this date"},
        "deep":{"type":"object","properties":{"hidden":{"type":"string"}}}}}}}})");
  REQUIRE(def.ok());
  Document d = mcpgw::catalog::document_of(*def, "srv:get_x");
  CHECK(d.name == "srv:get_x");
  CHECK(d.title == "Get X");  // annotations.title when there is no title
  CHECK(d.description == "Gets x.");
  // Parameter names and descriptions, one level of nesting deep.
  CHECK(d.parameters == "xId Which x filter since From this date deep ");
  auto bare = json::parse(R"({"name":"t","title":"T","inputSchema":{"type":"object"}})");
  REQUIRE(bare.ok());
  Document b = mcpgw::catalog::document_of(*bare, "t");
  CHECK(b.title == "T");
  CHECK(b.description.empty());
  CHECK(b.parameters.empty());
  CHECK(mcpgw::catalog::is_meta_tool("search_tools"));
  CHECK(mcpgw::catalog::is_meta_tool("call_tool"));
  CHECK_FALSE(mcpgw::catalog::is_meta_tool("bank:search_tools"));
}
