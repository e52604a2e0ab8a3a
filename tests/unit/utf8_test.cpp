#include <doctest/doctest.h>

#include "jsonrpc/message.hpp"
#include "util/utf8.hpp"

using namespace mcpgw;

TEST_CASE("utf8: well-formed text is recognised, ill-formed is not") {
  CHECK(valid_utf8(""));
  CHECK(valid_utf8("plain ASCII, long enough to take the eight-byte path"));
  CHECK(valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"));
  const char* bad[] = {
      "\x80",              // a stray continuation byte
      "\xC0\xAF",          // overlong '/'
      "\xC3",              // cut short
      "\xE0\x80\x80",      // overlong
      "\xED\xA0\xBD",      // a surrogate (CESU-8 of \ud83d)
      "\xF4\x90\x80\x80",  // past U+10FFFF
      "\xF5\x80\x80\x80",  // no such lead byte
      "\xFF",
      "abcdefgh\xF0\x9F\x98",  // an emoji cut mid-way after ASCII
  };
  for (const char* b : bad) {
    CAPTURE(b);
    CHECK(!valid_utf8(b));
    CHECK(valid_utf8(repair_utf8(b)));
  }
}

TEST_CASE("utf8: each maximal ill-formed subpart becomes one U+FFFD") {
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(repair_utf8("a\x80" "b") == "a" + fffd + "b");
  // Unicode's own example (chapter 3, U+FFFD substitution of maximal subparts).
  CHECK(repair_utf8("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64") ==
        "a" + fffd + fffd + fffd + "b" + fffd + "c" + fffd + fffd + "d");
  CHECK(repair_utf8("\xED\xA0\xBD") == fffd + fffd + fffd);
  CHECK(repair_utf8("\xF0\x9F\x98") == fffd);
  CHECK(repair_utf8("ok \xF0\x9F\x98\x80") == "ok \xF0\x9F\x98\x80");
}

TEST_CASE("json: every string the gateway reads and writes is well-formed UTF-8") {
  // Raw bytes a peer sent, in a value and in a key: repaired as they are read.
  auto doc = json::parse("{\"t\":\"caf\xE9 !\",\"k\xFF\":1}");
  REQUIRE(doc);
  CHECK(std::string((*doc)["t"].GetString()) == "caf\xEF\xBF\xBD !");
  CHECK(json::write(*doc) == "{\"t\":\"caf\xEF\xBF\xBD !\",\"k\xEF\xBF\xBD\":1}");
  // Bytes that came another way (CESU-8 of a surrogate) are repaired as written.
  json::Document built(rapidjson::kObjectType);
  built.AddMember(json::str("k\xED\xB0\x80", built.GetAllocator()), json::str("\xED\xB0\x80!", built.GetAllocator()),
                  built.GetAllocator());
  std::string out = json::write(built);
  CHECK(valid_utf8(out));
  CHECK(out == "{\"k\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\":\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD!\"}");
  // So does a reply whose error message quotes a peer's bytes, and its id.
  auto p = jsonrpc::parse("{\"jsonrpc\":\"2.0\",\"id\":\"i\xC3\",\"method\":\"m\xFE\"}");
  REQUIRE(p.messages.size() == 1);
  std::string reply = jsonrpc::make_error(p.messages[0].id(), jsonrpc::kMethodNotFound,
                                          "Method not found: " + std::string(p.messages[0].method()));
  CHECK(valid_utf8(reply));
  // A lone surrogate escape, high or low, is refused precisely: the text
  // it stands for is not Unicode. A pair, or an escaped backslash before
  // "udc00", is fine.
  for (const char* text : {R"({"t":"\ud83d"})", R"({"t":"\udc00"})", R"({"t":"x\ude00\ud83d"})"}) {
    CAPTURE(text);
    auto lone = json::parse(text);
    REQUIRE(!lone);
    CHECK(lone.error().find("surrogate") != std::string::npos);
  }
  auto pair = json::parse(R"({"t":"\ud83d\ude00","u":"\\udc00"})");
  REQUIRE(pair);
  CHECK(std::string((*pair)["t"].GetString()) == "\xF0\x9F\x98\x80");
  CHECK(std::string((*pair)["u"].GetString()) == "\\udc00");
}
