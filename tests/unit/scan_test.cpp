#include <doctest/doctest.h>

#include <string>

#include "jsonrpc/message.hpp"
#include "jsonrpc/scan.hpp"

using namespace mcpgw;

namespace {

/// The result the DOM path would write for response `text`.
std::string dom_result(const std::string& text) {
  auto d = json::parse(text);
  REQUIRE(d.ok());
  return json::write((*d)["result"]);
}

/// What `bytes` (a relayed result) means, written as the DOM path writes.
std::string meaning(std::string_view bytes) {
  auto d = json::parse(bytes);
  REQUIRE(d.ok());
  return json::write(*d);
}

std::string response(const std::string& result) { return R"({"jsonrpc":"2.0","id":3,"result":)" + result + "}"; }

}  // namespace

TEST_CASE("scan: a success response's result is found as its bytes, meaning what the DOM path writes") {
  for (std::string result : {
           R"({"content":[{"type":"text","text":"hi"}]})",
           R"( { "content" : [ ] , "structuredContent" : { "a" : [1, 2.50, -0, 1e5, true, false, null] } } )",
           R"({"content":[{"type":"text","text":"\u00e9\n\"quoted\" \\ \/ \ud83d\ude00"}]})",
           R"({"content":[{"type":"text","text":"caf\u00e9 and café and 日本語 and 😀"}]})",
           R"({"a":{"a":{"a":[[[[{"b":[]}]]]]}}})",
           R"({"dup":1,"dup":2})",
           R"({})",
       }) {
    std::string text = response(result);
    auto scanned = jsonrpc::scan_response(text);
    REQUIRE_MESSAGE(scanned, result);
    CHECK(scanned->id == "3");
    CHECK(scanned->result == std::string_view(result).substr(result.find_first_not_of(' '),
                                                               result.find_last_not_of(' ') -
                                                                   result.find_first_not_of(' ') + 1));
    CHECK(meaning(scanned->result) == dom_result(text));
  }
}

TEST_CASE("scan: the id may come after the result, members in any order, with whitespace anywhere") {
  std::string text = "\r\n\t{ \"result\" : {\"x\":1} ,\n \"id\" : 12345678901234567890 , \"jsonrpc\":\"2.0\" }\n";
  auto scanned = jsonrpc::scan_response(text);
  REQUIRE(scanned);
  CHECK(scanned->id == "12345678901234567890");
  CHECK(scanned->result == R"({"x":1})");
}

TEST_CASE("scan: a line break between the result's tokens takes the DOM path; elsewhere it does not matter") {
  // Relayed, it would end the stdio line or the SSE event the answer goes out in.
  CHECK_FALSE(jsonrpc::scan_response("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\n\"x\":1}}"));
  CHECK_FALSE(jsonrpc::scan_response("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":[1,\r2]}}"));
  CHECK_FALSE(jsonrpc::scan_response("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":1\r\n}}"));
  auto outside = jsonrpc::scan_response("{\n\"jsonrpc\":\"2.0\",\n\"result\":{\"x\":1},\n\"id\":1\n}\n");
  REQUIRE(outside);
  CHECK(outside->result == R"({"x":1})");
}

TEST_CASE("scan: what the gateway acts on is found, at the right depth only") {
  auto facts = [](const std::string& result) {
    auto s = jsonrpc::scan_response(response(result));
    REQUIRE(s);
    return s->facts;
  };
  CHECK(facts(R"({"content":[],"isError":true})").is_error);
  CHECK_FALSE(facts(R"({"content":[],"isError":false})").is_error);
  CHECK_FALSE(facts(R"({"content":[{"isError":true}]})").is_error);
  CHECK_FALSE(facts(R"({"isError":"true"})").is_error);
  CHECK(facts(R"({"_meta":{"nextTool":{"name":"x"}}})").next_tool);
  CHECK_FALSE(facts(R"({"structuredContent":{"_meta":{"nextTool":{}}}})").next_tool);
  CHECK_FALSE(facts(R"({"_meta":{"other":{"nextTool":1}}})").next_tool);
  CHECK(facts(R"({"resultType":"complete"})").result_type);
  CHECK_FALSE(facts(R"({"content":[{"resultType":1}]})").result_type);
  CHECK(facts(R"({"content":[{"type":"resource_link","uri":"file:///x"}]})").uri);
  CHECK(facts(R"({"_meta":{"ui":{"resourceUri":"ui://x/y"}}})").uri);
  CHECK(facts(R"({"_meta":{"ui/resourceUri":"ui://x/y"}})").uri);
  CHECK_FALSE(facts(R"({"content":[{"type":"text","text":"\"uri\":1"}]})").uri);
}

TEST_CASE("scan: anything else, or what the DOM path would change, is left to the DOM path") {
  for (std::string text : {
           // not a success response
           std::string(R"({"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}})"),
           std::string(R"({"jsonrpc":"2.0","method":"notifications/progress","params":{}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"method":"ping"})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":[1]})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":"x"})"),
           std::string(R"({"jsonrpc":"1.0","id":1,"result":{}})"),
           std::string(R"({"id":1,"result":{}})"),
           std::string(R"({"jsonrpc":"2.0","result":{}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{},"result":{}})"),
           std::string(R"({"jsonrpc":"2.0","id":null,"result":{}})"),
           std::string(R"([{"jsonrpc":"2.0","id":1,"result":{}}])"),
           // malformed
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{"a":1,}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{"a":01}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{"a":1.}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{"a":tru}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{"a":"x)"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{}} trailing)"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{"a":"\x"}})"),
           std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":\"tab\there\"}}"),
           // what the DOM path repairs or rewrites
           std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":\"\xff\xfe\"}}"),
           std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":\"\xed\xa0\x80\"}}"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{"a":"\udc00"}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{"a":"\ud800"}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{"a":"\ud800\u0041"}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{"a":1e400}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{"a":)") + std::string(320, '9') + "}}",
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{"is\u0045rror":true}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"res\u0075lt":{}})"),
           // a string id is never the gateway's own
           std::string(R"({"jsonrpc":"2.0","id":"a","result":{}})"),
       }) {
    bool relayed = jsonrpc::Message::relayed(std::string_view(text)).has_value();
    CHECK_MESSAGE(!relayed, text);
  }
}

TEST_CASE("scan: nesting past the limit takes the DOM path; up to it, the scan") {
  auto nested = [](std::size_t depth) {
    return response("{\"a\":" + std::string(depth, '[') + std::string(depth, ']') + "}");
  };
  auto wrap = [](int depth) {
    std::string inner = "1";
    for (int i = 1; i < depth; ++i) inner = "[" + inner + "]";
    return response("{\"a\":" + inner + "}");
  };
  CHECK(jsonrpc::scan_response(wrap(jsonrpc::kMaxScanDepth - 1)));
  CHECK_FALSE(jsonrpc::scan_response(wrap(jsonrpc::kMaxScanDepth + 1)));
  CHECK_FALSE(jsonrpc::scan_response(nested(100000)));
}

TEST_CASE("scan: a huge string passes whole, with what stops the fast path at every alignment") {
  std::string big(1 << 20, 'A');
  for (std::size_t at : {0u, 1u, 7u, 8u, 9u, 4095u, (1u << 20) - 1}) {
    for (std::string special : {"\\\"", "\\\\", "é", "\\n"}) {
      std::string s = big;
      s.replace(at, special.size(), special);
      std::string text = response(R"({"content":[{"type":"image","data":")" + s + R"("}]})");
      auto scanned = jsonrpc::scan_response(text);
      REQUIRE_MESSAGE(scanned, at);
      CHECK(meaning(scanned->result) == dom_result(text));
    }
    std::string bad = big;
    bad[at] = '\x01';
    CHECK_FALSE(jsonrpc::scan_response(response(R"({"data":")" + bad + R"("})")));
    bad[at] = '\x80';
    CHECK_FALSE(jsonrpc::scan_response(response(R"({"data":")" + bad + R"("})")));
  }
}

TEST_CASE("scan: a relayed message is built only when asked, into what read() builds") {
  std::string text = R"({"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"x"}],"isError":true}})";
  auto m = jsonrpc::Message::relayed(std::string_view(text));
  REQUIRE(m);
  CHECK(m->is_response());
  CHECK(m->id().int64() == 9);
  CHECK(m->error() == nullptr);
  REQUIRE(m->raw());
  CHECK(m->raw()->facts.is_error);
  CHECK(m->raw()->result == R"({"content":[{"type":"text","text":"x"}],"isError":true})");
  const json::Value* result = m->result();
  REQUIRE(result);
  CHECK(m->raw() == nullptr);
  CHECK(json::write(*result) == dom_result(text));
}

TEST_CASE("scan: a request's params.arguments are found as their bytes, or left to the DOM path") {
  auto args = [](const std::string& text) { return jsonrpc::scan_request_arguments(text); };
  const std::string call =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{ "n" : 2.50, "d":1, "d":2 },"_meta":{"a":[1]}}})";
  auto found = jsonrpc::scan_request_arguments(call);
  REQUIRE(found);
  CHECK(*found == R"({ "n" : 2.50, "d":1, "d":2 })");
  CHECK(args(R"({"params":{"arguments":{"x":"caf\u00e9"}},"id":"s","method":"tools/call","jsonrpc":"2.0"})"));
  for (std::string text : {
           std::string(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":[1]}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{},"arguments":{}}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{},"params":{"arguments":{}}})"),
           std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"arguments\":{\n\"x\":1}}}"),
           std::string(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"x":"\ud800"}}})"),
           std::string(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"x":1}}} x)"),
           std::string(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"x":1})"),
       }) {
    CAPTURE(text);
    CHECK_FALSE(args(text));
  }
  // A nested "arguments" is content, not the call's.
  CHECK_FALSE(args(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":{"arguments":{}}}})"));
}

TEST_CASE("make_request: raw arguments are written as they are, after the params' other members") {
  json::Document params(rapidjson::kObjectType);
  CHECK(jsonrpc::make_request(3, "tools/call", &params, R"({ "n" : 2.50 })") ==
        R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{ "n" : 2.50 }}})");
  params.AddMember("name", "t", params.GetAllocator());
  CHECK(jsonrpc::make_request(3, "tools/call", &params, R"({})") ==
        R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{}}})");
  CHECK(jsonrpc::make_request(3, "tools/call", nullptr, R"({"a":1})") ==
        R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{"a":1}}})");
  CHECK(jsonrpc::make_request(3, "tools/call", &params, {}) == jsonrpc::make_request(3, "tools/call", &params));
}

TEST_CASE("parse: a single tool call keeps its arguments' bytes; a batch or another method does not") {
  const std::string text =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"n":2.50}}})";
  auto one = jsonrpc::parse_keeping(std::string(text));
  REQUIRE(one.messages.size() == 1);
  REQUIRE(one.messages.front().raw_arguments());
  CHECK(one.messages.front().raw_arguments()->arguments == R"({"n":2.50})");
  auto batch = jsonrpc::parse_keeping("[" + text + "]");
  REQUIRE(batch.messages.size() == 1);
  CHECK_FALSE(batch.messages.front().raw_arguments());
  auto other = jsonrpc::parse_keeping(
      R"({"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","arguments":{"a":"b"}}})");
  REQUIRE(other.messages.size() == 1);
  CHECK_FALSE(other.messages.front().raw_arguments());
}
