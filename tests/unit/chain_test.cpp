#include <doctest/doctest.h>

#include "chain/chain.hpp"
#include "chain/merge.hpp"

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

// The merged result of a chain (chain/merge.hpp): what each kind of client
// sees, whatever it does with content and structuredContent.
namespace {

chain::Call call_of(const char* tool, const char* result) {
  chain::Call c;
  c.tool = tool;
  c.result = parse(result);
  c.is_error = c.result.HasMember("isError") && c.result["isError"].IsTrue();
  return c;
}

std::vector<chain::Call> calls_of(std::initializer_list<std::pair<const char*, const char*>> list) {
  std::vector<chain::Call> out;
  for (const auto& [tool, result] : list) out.push_back(call_of(tool, result));
  return out;
}

std::string sc_of(const json::Document& d) {
  return d.HasMember("structuredContent") ? json::write(d["structuredContent"]) : "(none)";
}

using Merge = config::Chain::Merge;
constexpr const char* kTextSchema = R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})";
constexpr const char* kClosedSchema =
    R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false})";

}  // namespace

TEST_CASE("chain merge: no outputSchema, merge all: every call's content, no structuredContent, each in the trace") {
  auto calls = calls_of({
      {"s:a", R"({"content":[{"type":"text","text":"a"}],"structuredContent":{"text":"a"},"_meta":{"nextTool":{"tool":"b"}}})"},
      {"s:b", R"({"content":[],"structuredContent":{"n":2},"_meta":{"nextTool":{"tool":"c"}}})"},
      {"s:c", R"({"content":[{"type":"text","text":"c"}],"_meta":{"k":"v","nextTool":{"tool":"x"}}})"},
  });
  auto r = chain::merge(calls, nullptr, nullptr, Merge::All);
  // b returned structured data without text: it shows as JSON text.
  CHECK(json::write(r["content"]) ==
        R"([{"type":"text","text":"a"},{"type":"text","text":"{\"n\":2}"},{"type":"text","text":"c"}])");
  CHECK(sc_of(r) == "(none)");
  CHECK_FALSE(r.HasMember("isError"));
  CHECK(json::write(r["_meta"]["k"]) == R"("v")");
  CHECK_FALSE(r["_meta"].HasMember("nextTool"));
  const auto& trace = r["_meta"]["mcpgw/chain"];
  REQUIRE(trace.Size() == 3);
  CHECK(json::write(trace[0]["structuredContent"]) == R"({"text":"a"})");
  CHECK(json::write(trace[1]["structuredContent"]) == R"({"n":2})");
  CHECK_FALSE(trace[2].HasMember("structuredContent"));
}

TEST_CASE("chain merge: no outputSchema, merge last: the last call's content and its structuredContent") {
  auto calls = calls_of({
      {"s:a", R"({"content":[{"type":"text","text":"a"}],"structuredContent":{"text":"a"},"isError":true})"},
      {"s:b", R"({"content":[{"type":"text","text":"b"}],"structuredContent":{"text":"b"}})"},
  });
  auto r = chain::merge(calls, nullptr, nullptr, Merge::Last);
  CHECK(json::write(r["content"]) == R"([{"type":"text","text":"b"}])");
  CHECK(sc_of(r) == R"({"text":"b"})");
  CHECK(r["isError"].IsTrue());
  CHECK(r["_meta"]["mcpgw/chain"].Size() == 2);

  // A refusal shows every call and the reason: no structuredContent may hide them.
  chain::Refusal refusal{"mcpgw: chain stopped at hop 2 (s:x): unknown tool", call_of("s:x", "{}")};
  auto stopped = chain::merge(calls, &refusal, nullptr, Merge::Last);
  CHECK(json::write(stopped["content"]) ==
        R"([{"type":"text","text":"a"},{"type":"text","text":"b"},)"
        R"({"type":"text","text":"mcpgw: chain stopped at hop 2 (s:x): unknown tool"}])");
  CHECK(sc_of(stopped) == "(none)");
  CHECK(stopped["_meta"]["mcpgw/chain"].Size() == 3);
  CHECK(stopped["_meta"]["mcpgw/chain"][2]["isError"].IsTrue());
}

TEST_CASE("chain merge: an outputSchema that admits more keys: the first conforming structuredContent, with every call's text") {
  auto schema = parse(kTextSchema);
  auto calls = calls_of({
      {"s:typed", R"({"content":[{"type":"text","text":"a"}],"structuredContent":{"text":"a"}})"},
      {"s:other", R"({"content":[{"type":"text","text":"b1"},{"type":"image","data":"","mimeType":"image/png"},)"
                  R"({"type":"text","text":"b2"}],"structuredContent":{"n":1}})"},
      {"s:echo", R"({"content":[{"type":"text","text":"c"}]})"},
  });
  auto r = chain::merge(calls, nullptr, &schema, Merge::All);
  CHECK(sc_of(r) == R"({"text":"a","mcpgw/hops":[{"tool":"s:typed","text":"a"},{"tool":"s:other","text":"b1\nb2"},)"
                    R"({"tool":"s:echo","text":"c"}]})");
  CHECK(chain::conforms(schema, r["structuredContent"]));
  CHECK(r["content"].Size() == 5);

  // The called tool's own result does not conform: a later call's that does is taken.
  calls[0].result["structuredContent"]["text"].SetInt(5);
  calls[1].result["structuredContent"].CopyFrom(parse(R"({"text":"from b"})"), calls[1].result.GetAllocator());
  r = chain::merge(calls, nullptr, &schema, Merge::All);
  CHECK(r["structuredContent"]["text"] == "from b");
  // None conforms: no structuredContent at all.
  calls[1].result["structuredContent"]["text"].SetBool(true);
  r = chain::merge(calls, nullptr, &schema, Merge::All);
  CHECK(sc_of(r) == "(none)");
  CHECK(r["content"].Size() == 5);
}

TEST_CASE("chain merge: a closed outputSchema gets the conforming structuredContent unchanged") {
  auto schema = parse(kClosedSchema);
  auto calls = calls_of({
      {"s:typed", R"({"content":[{"type":"text","text":"a"}],"structuredContent":{"text":"a"}})"},
      {"s:echo", R"({"content":[{"type":"text","text":"b"}]})"},
  });
  auto r = chain::merge(calls, nullptr, &schema, Merge::All);
  CHECK(sc_of(r) == R"({"text":"a"})");
  CHECK(json::write(r["content"]) == R"([{"type":"text","text":"a"},{"type":"text","text":"b"}])");
}

TEST_CASE("chain merge: an outputSchema with merge last looks from the last call back") {
  auto schema = parse(kTextSchema);
  auto calls = calls_of({
      {"s:typed", R"({"content":[{"type":"text","text":"a"}],"structuredContent":{"text":"a"}})"},
      {"s:typed", R"({"content":[{"type":"text","text":"b"}],"structuredContent":{"text":"b"}})"},
  });
  // The last call conforms and is all the content shows: nothing to add.
  auto r = chain::merge(calls, nullptr, &schema, Merge::Last);
  CHECK(sc_of(r) == R"({"text":"b"})");
  // The last call has none: the called tool's own, carrying the last call's text.
  calls[1] = call_of("s:echo", R"({"content":[{"type":"text","text":"b"}]})");
  r = chain::merge(calls, nullptr, &schema, Merge::Last);
  CHECK(sc_of(r) == R"({"text":"a","mcpgw/hops":[{"tool":"s:echo","text":"b"}]})");
  CHECK(json::write(r["content"]) == R"([{"type":"text","text":"b"}])");
}

TEST_CASE("chain merge: the refusal text reaches a client that shows only structuredContent") {
  auto schema = parse(kTextSchema);
  auto calls = calls_of({{"s:typed", R"({"content":[{"type":"text","text":"a"}],"structuredContent":{"text":"a"}})"}});
  chain::Refusal refusal{"mcpgw: chain stopped at hop 1 (s:gone): unknown tool", call_of("s:gone", "{}")};
  auto r = chain::merge(calls, &refusal, &schema, Merge::All);
  CHECK(r["isError"].IsTrue());
  CHECK(sc_of(r) == R"({"text":"a","mcpgw/hops":[{"tool":"s:typed","text":"a"},)"
                    R"({"tool":"s:gone","text":"mcpgw: chain stopped at hop 1 (s:gone): unknown tool"}]})");
}

TEST_CASE("chain merge: which schemas admit one more property") {
  const char* yes[] = {
      R"({"type":"object"})",
      kTextSchema,
      R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","title":"t","$defs":{"x":{}},)"
      R"("properties":{"a":{"$ref":"#/$defs/x"}},"additionalProperties":true,"minProperties":1})",
      R"({"type":["object","null"],"additionalProperties":{}})",
  };
  const char* no[] = {
      kClosedSchema,
      R"({"type":"object","additionalProperties":{"type":"string"}})",
      R"({"type":"object","unevaluatedProperties":false})",
      R"({"type":"object","maxProperties":2})",
      R"({"type":"object","propertyNames":{"pattern":"^[a-z]+$"}})",
      R"({"type":"object","patternProperties":{"^m":{"type":"string"}}})",
      R"({"allOf":[{"type":"object"}]})",
      R"({"$ref":"#/$defs/x","$defs":{"x":{"type":"object"}}})",
      R"({"type":"object","properties":{"mcpgw/hops":{"type":"string"}}})",
      R"({"type":"object","x-vendor-rule":true})",
      R"(true)",
  };
  for (const char* s : yes) {
    INFO(s);
    CHECK(chain::admits_extra_property(parse(s), chain::kHopsKey));
  }
  for (const char* s : no) {
    INFO(s);
    CHECK_FALSE(chain::admits_extra_property(parse(s), chain::kHopsKey));
  }
}

TEST_CASE("listed outputSchema: mcpgw/hops declared where the declaration decides alone") {
  auto declared = [](const char* text) {
    json::Document d = parse(text);
    bool did = catalog::declare_hops(d, d.GetAllocator());
    return std::make_pair(did, std::move(d));
  };
  for (const char* s : {kClosedSchema, kTextSchema, R"({"type":"object"})",
                        R"({"type":"object","unevaluatedProperties":false,"minProperties":1})"}) {
    INFO(s);
    auto [did, d] = declared(s);
    CHECK(did);
    CHECK(catalog::declares_hops(d));
    CHECK(d["properties"]["mcpgw/hops"]["type"] == "array");
    const bool required = d.HasMember("required") && json::write(d["required"]).find("mcpgw/hops") != std::string::npos;
    CHECK_FALSE(required);
  }
  for (const char* s : {R"({"type":"object","patternProperties":{"^m":{"type":"string"}}})",
                        R"({"allOf":[{"type":"object"}]})", R"({"type":"object","properties":{"mcpgw/hops":{}}})",
                        R"({"type":"object","propertyNames":{"pattern":"^[a-z]+$"}})", R"({"type":"array"})"}) {
    INFO(s);
    auto [did, d] = declared(s);
    CHECK_FALSE(did);
    CHECK(json::write(d) == json::write(parse(s)));
  }
}

TEST_CASE("chain merge: a closed outputSchema as listed (mcpgw/hops declared) carries every hop") {
  auto schema = parse(kClosedSchema);
  catalog::declare_hops(schema, schema.GetAllocator());
  auto calls = calls_of({
      {"s:typed", R"({"content":[{"type":"text","text":"a"}],"structuredContent":{"text":"a"}})"},
      {"s:echo", R"({"content":[{"type":"text","text":"b"}]})"},
  });
  auto r = chain::merge(calls, nullptr, &schema, Merge::All);
  CHECK(sc_of(r) == R"({"text":"a","mcpgw/hops":[{"tool":"s:typed","text":"a"},{"tool":"s:echo","text":"b"}]})");
  CHECK(chain::conforms(schema, r["structuredContent"]));
}
