#include <doctest/doctest.h>

#include "chain/chain.hpp"

using namespace mcpgw;

namespace {
json::Document parse(const char* text) {
  auto d = json::parse(text);
  REQUIRE(d.ok());
  return std::move(*d);
}
catalog::ExposedTool tool_with_schema(const char* schema) {
  catalog::ExposedTool t;
  t.name = "s:t";
  t.definition = std::string(R"({"name":"s:t","inputSchema":)") + schema + "}";
  return t;
}
}  // namespace

TEST_CASE("chain: canonical arguments ignore key order, keep everything else") {
  CHECK(chain::canonical(parse(R"({"b":1,"a":{"d":[2,{"y":1,"x":2}],"c":null}})")) ==
        R"({"a":{"c":null,"d":[2,{"x":2,"y":1}]},"b":1})");
  CHECK(chain::canonical(parse(R"({"a":1})")) != chain::canonical(parse(R"({"a":"1"})")));
  CHECK(chain::canonical(parse(R"([3,1])")) != chain::canonical(parse(R"([1,3])")));
  CHECK(chain::canonical(parse(R"({"k\"ey":"v"})")) == R"({"k\"ey":"v"})");
}

TEST_CASE("chain: nextTool is found under tool or name, only as an object") {
  CHECK(chain::has_next_tool(parse(R"({"content":[],"_meta":{"nextTool":{"tool":"x"}}})")));
  CHECK(chain::has_next_tool(parse(R"({"content":[],"_meta":{"nextTool":{"name":"x"}}})")));
  CHECK(!chain::has_next_tool(parse(R"({"content":[],"_meta":{"nextTool":"x"}})")));
  CHECK(!chain::has_next_tool(parse(R"({"content":[]})")));
}

TEST_CASE("chain: arguments are validated against the inputSchema (draft-04 keywords)") {
  auto t = tool_with_schema(
      R"({"type":"object","properties":{"reason":{"type":"string","minLength":3},"n":{"type":"integer","minimum":1}},)"
      R"("required":["reason"],"additionalProperties":false})");
  CHECK(chain::validate_arguments(t, parse(R"({"reason":"locked"})")).empty());
  CHECK(chain::validate_arguments(t, parse(R"({"reason":"locked","n":2})")).empty());
  std::string why = chain::validate_arguments(t, parse(R"({"n":2})"));
  CHECK(why.find("required") != std::string::npos);
  why = chain::validate_arguments(t, parse(R"({"reason":5})"));
  CHECK(why.find("type") != std::string::npos);
  CHECK(why.find("/reason") != std::string::npos);
  CHECK(chain::validate_arguments(t, parse(R"({"reason":"okay","extra":1})")).find("additionalProperties") !=
        std::string::npos);
  CHECK(chain::validate_arguments(t, parse(R"({"reason":"okay","n":0})")).find("minimum") != std::string::npos);
  // Keywords of later drafts are ignored rather than failing the call.
  auto later = tool_with_schema(R"({"type":"object","$defs":{"x":{}},"unevaluatedProperties":false})");
  CHECK(chain::validate_arguments(later, parse(R"({"anything":1})")).empty());
  // A tool without a schema accepts anything.
  catalog::ExposedTool bare;
  bare.definition = R"({"name":"x"})";
  CHECK(chain::validate_arguments(bare, parse(R"({"a":1})")).empty());
}
