#include <doctest/doctest.h>

#include <set>

#include "catalog/filter.hpp"
#include "catalog/naming.hpp"

using namespace mcpgw;
using Slices = std::vector<std::string>;

namespace {
json::Document tool(const char* text) {
  auto d = json::parse(text);
  REQUIRE(d.ok());
  return std::move(*d);
}
}  // namespace

TEST_CASE("filter: the seed's order on a table of cases") {
  struct Case {
    const char* why;
    config::Filters f;
    const char* name;
    Slices slices;
    bool visible;
  } cases[] = {
      {"no filters: everything passes", {}, "a:x", {"other"}, true},
      {"excluded tool", {{}, {}, {}, {"a:x"}}, "a:x", {"read"}, false},
      {"excluded tool by glob", {{}, {}, {}, {"a:*"}}, "a:x", {"read"}, false},
      {"excluded tool wins over included tool", {{}, {}, {"a:x"}, {"a:x"}}, "a:x", {"read"}, false},
      {"included tools decide alone: listed", {{}, {"read"}, {"a:x"}, {}}, "a:x", {"read"}, true},
      {"included tools decide alone: unlisted", {{"read"}, {}, {"a:y"}, {}}, "a:x", {"read"}, false},
      {"included tools decide alone over include_slices", {{"delete"}, {}, {"a:?"}, {}}, "a:x", {"read"}, true},
      {"excluded slice", {{}, {"delete"}, {}, {}}, "a:x", {"read", "delete"}, false},
      {"excluded slice wins over included slice", {{"read"}, {"read"}, {}, {}}, "a:x", {"read"}, false},
      {"included slice matches one of several", {{"list"}, {}, {}, {}}, "a:x", {"read", "list"}, true},
      {"included slice missing", {{"list"}, {}, {}, {}}, "a:x", {"read"}, false},
      {"other passes only when included: not included", {{"read"}, {}, {}, {}}, "a:x", {"other"}, false},
      {"other passes only when included: included", {{"read", "other"}, {}, {}, {}}, "a:x", {"other"}, true},
      {"excluding other", {{}, {"other"}, {}, {}}, "a:x", {"other"}, false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.why);
    CHECK(catalog::passes(c.f, c.name, {}, c.slices) == c.visible);
  }
}

TEST_CASE("filter: a server's own filters also match its upstream tool names") {
  config::Filters f;
  f.exclude_tools = {"delete_*"};
  CHECK(!catalog::passes(f, "cms:delete_page", "delete_page", {"other"}));
  CHECK(catalog::passes(f, "cms:get_page", "get_page", {"other"}));
  // The global filters get no upstream name: exposed names only.
  f.exclude_tools = {"delete_*"};
  CHECK(catalog::passes(f, "cms:delete_page", {}, {"other"}));
}

TEST_CASE("filter: modes are filters applied after the server's filters") {
  config::Filters global;
  global.exclude_slices = {"delete"};
  config::Filters readonly;
  readonly.include_slices = {"read", "list"};
  auto visible = [&](const char* name, const Slices& s) {
    return catalog::passes(global, name, {}, s) && catalog::passes(readonly, name, {}, s);
  };
  CHECK(visible("a:get", {"read"}));
  CHECK(visible("a:list", {"list"}));
  CHECK(!visible("a:drop", {"delete"}));
  CHECK(!visible("a:write", {"other"}));
}

TEST_CASE("slices: server globs, then _meta.slices, then annotations, else other") {
  config::Server s;
  s.slices = {{"read", {"get_*", "search_*"}}, {"list", {"list_*"}}, {"search", {"search_*"}}};
  auto t = tool(R"({"name":"x","_meta":{"slices":["custom"]},"annotations":{"readOnlyHint":true}})");
  CHECK(catalog::slices_of(&s, "get_doc", t) == Slices{"read"});
  CHECK(catalog::slices_of(&s, "search_docs", t) == Slices{"read", "search"});
  CHECK(catalog::slices_of(&s, "other_name", t) == Slices{"custom"});
  CHECK(catalog::slices_of(nullptr, "x", tool(R"({"name":"x","_meta":{"slices":[]},"annotations":{"readOnlyHint":true}})")) ==
        Slices{"read"});
  CHECK(catalog::slices_of(nullptr, "x", tool(R"({"name":"x","annotations":{"destructiveHint":true}})")) ==
        Slices{"delete"});
  CHECK(catalog::slices_of(nullptr, "x", tool(R"({"name":"x","annotations":{"readOnlyHint":false}})")) ==
        Slices{"other"});
  CHECK(catalog::slices_of(nullptr, "x", tool(R"({"name":"x","_meta":{"slices":"read"}})")) == Slices{"other"});
}

TEST_CASE("glob: stars, question marks, literals, no exponential blow-up") {
  CHECK(catalog::glob_match("*", ""));
  CHECK(catalog::glob_match("get_*", "get_account"));
  CHECK(!catalog::glob_match("get_*", "list_accounts"));
  CHECK(catalog::glob_match("*:get_*", "bank:get_balance"));
  CHECK(catalog::glob_match("a?c", "abc"));
  CHECK(!catalog::glob_match("a?c", "ac"));
  CHECK(catalog::glob_match("a*b*c", "axxbyyc"));
  CHECK(!catalog::glob_match("a*b*c", "axxbyy"));
  CHECK(!catalog::glob_match(std::string(30, '*') + "b", std::string(5000, 'a')));
}

TEST_CASE("naming: shortening is stable, exact length, collision-free and keeps short names") {
  CHECK(catalog::shorten("bank:list", 0) == "bank:list");
  CHECK(catalog::shorten("bank:list", 64) == "bank:list");
  std::string long_name = "server:" + std::string(100, 'a');
  std::string s = catalog::shorten(long_name, 64);
  CHECK(s.size() == 64);
  CHECK(s.rfind("server:aaa", 0) == 0);
  CHECK(s == catalog::shorten(long_name, 64));
  // Pinned: the suffix is SHA-256 based and must not change between releases,
  // or clients holding the old name break.
  // (sha256 of the full name starts 851d3342cc)
  CHECK(catalog::shorten("a_very_long_server_name__an_even_longer_tool_name_that_goes_on", 32) ==
        "a_very_long_server_na-851d3342cc");
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    std::string name = "upstream_server_with_long_name__generated_tool_number_" + std::to_string(i);
    std::string shortened = catalog::shorten(name, 40);
    CHECK(shortened.size() == 40);
    CHECK(catalog::strict_client_name(shortened));
    seen.insert(shortened);
  }
  CHECK(seen.size() == 10000);
}

TEST_CASE("naming: client name rules") {
  CHECK(catalog::mcp_recommended_name("bank.list-accounts_2"));
  CHECK(!catalog::mcp_recommended_name("bank:list"));
  CHECK(!catalog::mcp_recommended_name(""));
  CHECK(!catalog::mcp_recommended_name(std::string(129, 'a')));
  CHECK(catalog::strict_client_name("bank__list"));
  CHECK(!catalog::strict_client_name("bank.list"));
  CHECK(!catalog::strict_client_name(std::string(65, 'a')));
}
