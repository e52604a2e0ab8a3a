#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <mcpgw/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>

using mcpgw::Json;
using mcpgw::JsonError;

namespace {
// The message of the JsonError that parsing `text` throws, or "" if it parses.
std::string parse_error(std::string_view text) {
  try {
    Json::parse(text);
  } catch (const JsonError& e) {
    return e.what();
  }
  return "";
}

// Checks that `text` is rejected at byte `offset` for `reason`.
void check_rejected(std::string_view text, std::size_t offset, std::string_view reason) {
  const std::string expected =
      "JSON parse error at byte " + std::to_string(offset) + ": " + std::string(reason);
  CAPTURE(text);
  CHECK(parse_error(text) == expected);
  CHECK_FALSE(Json::try_parse(text).has_value());
}
}  // namespace

TEST_CASE("plugin json: every type constructs and reports its type") {
  CHECK(Json().type() == Json::Type::Null);
  CHECK(Json(nullptr).is_null());
  CHECK(Json(true).type() == Json::Type::Bool);
  CHECK(Json(false).as_bool(true) == false);
  CHECK(Json(1.5).type() == Json::Type::Number);
  CHECK_FALSE(Json(1.5).is_integer());
  CHECK(Json(0.5f).as_number() == 0.5);
  CHECK(Json("c-string").as_string() == "c-string");
  CHECK(Json(std::string("string")).as_string() == "string");
  CHECK(Json(std::string_view("view")).as_string() == "view");
  CHECK(Json(static_cast<const char*>(nullptr)).is_null());
  CHECK(Json(Json::Array{1, 2}).type() == Json::Type::Array);
  CHECK(Json(Json::Object{{"k", 1}}).type() == Json::Type::Object);
  CHECK(Json::array().is_array());
  CHECK(Json::array().empty());
  CHECK(Json::object().is_object());
  CHECK(Json::object().empty());
}

TEST_CASE("plugin json: integers of every width are held exactly") {
  CHECK(Json(std::int8_t{-128}).as_int() == -128);
  CHECK(Json(std::uint8_t{255}).as_int() == 255);
  CHECK(Json(short{-3}).as_int() == -3);
  CHECK(Json(static_cast<unsigned short>(65535)).as_int() == 65535);
  CHECK(Json(-7).as_int() == -7);
  CHECK(Json(7u).as_int() == 7);
  CHECK(Json(-8L).as_int() == -8);
  CHECK(Json(8UL).as_int() == 8);
  CHECK(Json(-9LL).as_int() == -9);
  CHECK(Json(9ULL).as_int() == 9);
  for (const Json& j : {Json(1), Json(1u), Json(1LL), Json(std::uint64_t{1})}) {
    CHECK(j.is_integer());
    CHECK(j.type() == Json::Type::Number);
  }

  const Json min(std::numeric_limits<std::int64_t>::min());
  CHECK(min.is_integer());
  CHECK(min.as_int() == std::numeric_limits<std::int64_t>::min());
  CHECK(min.dump() == "-9223372036854775808");

  const Json fits(static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  CHECK(fits.is_integer());
  CHECK(fits.as_int() == std::numeric_limits<std::int64_t>::max());

  const Json max(std::numeric_limits<std::uint64_t>::max());
  CHECK(max.is_number());
  CHECK_FALSE(max.is_integer());
  CHECK(max.as_number() == 18446744073709551615.0);
  CHECK(max.as_int(-1) == -1);  // 2^64 does not fit
}

TEST_CASE("plugin json: array() and object() build nested documents") {
  const Json j = Json::object({{"a", 1},
                               {"b", Json::array({1, "x", Json::array({true})})},
                               {"c", Json::object({{"d", nullptr}})}});
  REQUIRE(j.is_object());
  CHECK(j.size() == 3);
  CHECK(j["a"].as_int() == 1);
  CHECK(j["b"].size() == 3);
  CHECK(j["b"][1].as_string() == "x");
  CHECK(j["b"][2][0].as_bool() == true);
  CHECK(j["c"].contains("d"));
  CHECK(j["c"]["d"].is_null());
  CHECK(j.dump() == R"({"a":1,"b":[1,"x",[true]],"c":{"d":null}})");

  const Json dup = Json::object({{"k", 1}, {"other", 2}, {"k", 3}});
  CHECK(dup.size() == 2);
  CHECK(dup.dump() == R"({"k":3,"other":2})");
}

TEST_CASE("plugin json: const lookups of missing keys and non-objects yield null") {
  const Json obj = Json::object({{"a", 1}});
  CHECK(obj["missing"].is_null());
  CHECK(obj["a"]["deeper"]["still"].is_null());
  CHECK(obj.find("missing") == nullptr);
  CHECK(obj.find("a") == &obj["a"]);
  CHECK_FALSE(obj.contains("missing"));
  CHECK(obj.size() == 1);  // const lookups never insert

  const Json arr = Json::array({1});
  CHECK(arr["a"].is_null());
  CHECK(arr.find("a") == nullptr);
  const Json num(5), text("text"), null;
  CHECK(num["a"].is_null());
  CHECK(text["a"].is_null());
  CHECK(null["a"].is_null());
  CHECK(null.is_null());  // still null: const lookups never convert
  CHECK(Json("text").size() == 0);
  CHECK(Json(5).items().empty());
  CHECK(Json(5).members().empty());
}

TEST_CASE("plugin json: non-const operator[] inserts members") {
  Json j;
  j["a"]["b"] = 1;  // null becomes an object at both levels
  j["c"] = "x";
  CHECK(j.dump() == R"({"a":{"b":1},"c":"x"})");
  j["a"]["b"] = 2;  // existing member, no new insertion
  CHECK(j["a"].size() == 1);
  CHECK(j["a"]["b"].as_int() == 2);
  j["n"];
  CHECK(j.contains("n"));
  CHECK(j["n"].is_null());

  Json arr = Json::array({1});
  CHECK_THROWS_AS(arr["x"], JsonError);
  Json num(3);
  CHECK_THROWS_AS(num["x"], JsonError);
  CHECK(num.as_int() == 3);  // a failed access leaves the value alone
}

TEST_CASE("plugin json: set, erase and push_back chain and reject wrong types") {
  Json obj;
  obj.set("a", 1).set("b", "x").set("a", 2);
  CHECK(obj.dump() == R"({"a":2,"b":"x"})");  // replacing keeps the position
  CHECK(obj.erase("a"));
  CHECK_FALSE(obj.erase("a"));
  CHECK(obj.dump() == R"({"b":"x"})");
  CHECK_FALSE(Json(1).erase("a"));
  CHECK_FALSE(Json().erase("a"));

  Json arr;
  arr.push_back(1).push_back("x").push_back(Json::object({{"k", true}}));
  CHECK(arr.dump() == R"([1,"x",{"k":true}])");

  Json s("text");
  CHECK_THROWS_AS(s.set("a", 1), JsonError);
  CHECK_THROWS_AS(s.push_back(1), JsonError);
  Json a = Json::array();
  CHECK_THROWS_AS(a.set("a", 1), JsonError);
  Json o = Json::object();
  CHECK_THROWS_AS(o.push_back(1), JsonError);
  CHECK(o.empty());
}

TEST_CASE("plugin json: integer and string subscripts are unambiguous") {
  const Json c = Json::parse(R"([10, {"k": "v"}])");
  CHECK(c[0].as_int() == 10);
  CHECK(c[1]["k"].as_string() == "v");
  CHECK(c[std::size_t{1}]["k"].as_string() == "v");
  CHECK(c[1][std::string("k")].as_string() == "v");
  CHECK(c[1][std::string_view("k")].as_string() == "v");
  CHECK(c[2].is_null());
  CHECK(c[-1].is_null());
  CHECK(Json::object({{"0", 1}})[0].is_null());

  Json m = c;
  static_assert(std::is_same_v<decltype(m[0]), const Json&>);
  static_assert(std::is_same_v<decltype(m["k"]), Json&>);
  static_assert(std::is_same_v<decltype(c["k"]), const Json&>);
  CHECK(m[0].as_int() == 10);
  CHECK(m[1]["k"].as_string() == "v");
  m.at(1)["k"] = "w";
  m.at(0) = 11;
  CHECK(m.dump() == R"([11,{"k":"w"}])");
  CHECK(c.dump() == R"([10,{"k":"v"}])");  // the copy was deep
  CHECK_THROWS_AS(m.at(2), JsonError);
  Json obj = Json::object({{"k", 1}});
  CHECK_THROWS_AS(obj.at(0), JsonError);

  Json keyed;
  keyed[std::string("s")] = 1;
  keyed[std::string_view("v")] = 2;
  CHECK(keyed.dump() == R"({"s":1,"v":2})");
}

TEST_CASE("plugin json: lenient as_* reads fall back to the default") {
  CHECK(Json(5).as_bool(true) == true);
  CHECK(Json("true").as_bool() == false);
  CHECK(Json(true).as_number(4) == 4);
  CHECK(Json(5).as_number() == 5.0);
  CHECK(Json(2.5).as_number() == 2.5);
  CHECK(Json("x").as_int(7) == 7);
  CHECK(Json(2.5).as_int(7) == 7);
  CHECK(Json(1e300).as_int(7) == 7);
  CHECK(Json(std::nan("")).as_int(7) == 7);
  CHECK(Json(3.0).as_int() == 3);
  CHECK(Json(-9223372036854775808.0).as_int() == std::numeric_limits<std::int64_t>::min());
  CHECK(Json(9223372036854775808.0).as_int(7) == 7);
  CHECK(Json(5).as_string("d") == "d");
  CHECK(Json().as_string() == "");
  CHECK(Json::array().as_string("d") == "d");
}

TEST_CASE("plugin json: dump compact and pretty round-trip") {
  const Json doc = Json::object({
      {"name", "tool \"x\""},
      {"ints", Json::array({0, -1, std::numeric_limits<std::int64_t>::max(),
                            std::numeric_limits<std::int64_t>::min()})},
      {"doubles", Json::array({0.1, -2.5e-300, 1e300, 3.0, 18446744073709551615.0})},
      {"nested", Json::object({{"empty_a", Json::array()},
                               {"empty_o", Json::object()},
                               {"deep", Json::array({Json::object({{"x", nullptr}})})}})},
      {"flags", Json::array({true, false})},
  });
  const std::string compact = doc.dump();
  CHECK(compact.find('\n') == std::string::npos);
  CHECK(Json::parse(compact) == doc);
  CHECK(Json::parse(compact).dump() == compact);  // member order survives
  CHECK(Json::parse(doc.dump(2)) == doc);
  CHECK(Json::parse(doc.dump(4)).dump() == compact);
  CHECK(doc.dump(0) == compact);
  CHECK(doc.dump(-3) == compact);

  const Json small = Json::object(
      {{"a", 1}, {"b", Json::array({true, nullptr})}, {"c", Json::object()}, {"d", Json::array()}});
  CHECK(small.dump() == R"({"a":1,"b":[true,null],"c":{},"d":[]})");
  CHECK(small.dump(2) ==
        "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ],\n  \"c\": {},\n  \"d\": []\n}");
  CHECK(Json::array().dump(2) == "[]");
  CHECK(Json(0.1).dump() == "0.1");
  CHECK(Json(1e300).dump() == "1e+300");
  CHECK(Json::parse(Json(3.0).dump()) == Json(3.0));
}

TEST_CASE("plugin json: NaN and infinities serialise as null") {
  CHECK(Json(std::nan("")).dump() == "null");
  CHECK(Json(std::numeric_limits<double>::infinity()).dump() == "null");
  CHECK(Json::array({-std::numeric_limits<double>::infinity()}).dump(2) == "[\n  null\n]");
}

TEST_CASE("plugin json: strings escape on output and UTF-8 passes through") {
  const std::string raw = std::string("q\"b\\s/n\nt\tr\rb\bf\fz") + '\0' + "\x1f\x7f" +
                          "h\xC3\xA9llo \xF0\x9F\x98\x80";
  const Json j(raw);
  CHECK(j.dump() ==
        "\"q\\\"b\\\\s/n\\nt\\tr\\rb\\bf\\fz\\u0000\\u001f\x7fh\xC3\xA9llo \xF0\x9F\x98\x80\"");
  CHECK(Json::parse(j.dump()).as_string() == raw);
  CHECK(Json::parse("\"h\xC3\xA9llo \xF0\x9F\x98\x80\"").as_string() ==
        "h\xC3\xA9llo \xF0\x9F\x98\x80");
  CHECK(Json::parse(R"("a\/b\"\\\b\f\n\r\t")").as_string() == "a/b\"\\\b\f\n\r\t");
  CHECK(Json::object({{"k\n", 1}}).dump() == "{\"k\\n\":1}");  // keys escape too
}

TEST_CASE("plugin json: \\u escapes decode to UTF-8, surrogate pairs to one code point") {
  CHECK(Json::parse(R"("\u0041\u00e9\u00E9\u20ac")").as_string() ==
        "A\xC3\xA9\xC3\xA9\xE2\x82\xAC");
  const std::string emoji = Json::parse(R"("\ud83d\ude00")").as_string();
  CHECK(emoji == "\xF0\x9F\x98\x80");  // U+1F600
  CHECK(emoji.size() == 4);
  CHECK(Json::parse(R"("\uDBFF\uDFFF")").as_string() == "\xF4\x8F\xBF\xBF");  // U+10FFFF
  CHECK(Json::parse(R"("\u0000")").as_string() == std::string(1, '\0'));
  CHECK(Json::parse(R"("\u07ff\u0800\uffff")").as_string() == "\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF");
}

TEST_CASE("plugin json: malformed input is rejected with its byte offset") {
  check_rejected("", 0, "unexpected end of input");
  check_rejected(" \t\r\n", 4, "unexpected end of input");
  check_rejected("\f1", 0, "unexpected character");
  check_rejected("[1] x", 4, "trailing characters");
  check_rejected("1 2", 2, "trailing characters");
  check_rejected(std::string_view("1\0", 2), 1, "trailing characters");
  check_rejected("\"abc", 4, "unterminated string");
  check_rejected("\"a\x01\"", 2, "control character in string");
  check_rejected("\"a\nb\"", 2, "control character in string");
  check_rejected(R"("\x")", 1, "invalid escape");
  check_rejected(R"("\)", 1, "invalid escape");
  check_rejected(R"("\u12G4")", 3, "invalid \\u escape");
  check_rejected(R"("\u12")", 3, "invalid \\u escape");
  check_rejected(R"("\u-123")", 3, "invalid \\u escape");
  check_rejected(R"("\ud800")", 1, "unpaired surrogate");
  check_rejected(R"("\ud800x")", 1, "unpaired surrogate");
  check_rejected(R"("\udc00")", 1, "unpaired surrogate");
  check_rejected(R"("\ud800\u0041")", 1, "unpaired surrogate");
  check_rejected(R"("\ud800\ud800")", 1, "unpaired surrogate");
  check_rejected("\"\xC0\x80\"", 1, "invalid UTF-8");          // overlong NUL
  check_rejected("\"\xC1\xBF\"", 1, "invalid UTF-8");          // overlong ASCII
  check_rejected("\"\xE0\x80\xAF\"", 1, "invalid UTF-8");      // overlong 3-byte
  check_rejected("\"\xF0\x80\x80\xAF\"", 1, "invalid UTF-8");  // overlong 4-byte
  check_rejected("\"ab\xFF\"", 3, "invalid UTF-8");
  check_rejected("\"\x80\"", 1, "invalid UTF-8");               // stray continuation
  check_rejected("\"\xE2\x82\"", 1, "invalid UTF-8");           // truncated before the quote
  check_rejected("\"\xE2\x82", 1, "invalid UTF-8");             // truncated at the end
  check_rejected("\"\xED\xA0\x80\"", 1, "invalid UTF-8");       // UTF-8 encoded surrogate
  check_rejected("\"\xF4\x90\x80\x80\"", 1, "invalid UTF-8");   // above U+10FFFF
  check_rejected("\"\xF5\x80\x80\x80\"", 1, "invalid UTF-8");
  check_rejected("01", 1, "leading zero");
  check_rejected("-01", 2, "leading zero");
  check_rejected("1.", 2, "digit expected after '.'");
  check_rejected("1.e5", 2, "digit expected after '.'");
  check_rejected(".5", 0, "unexpected character");
  check_rejected("+1", 0, "unexpected character");
  check_rejected("-", 1, "invalid number");
  check_rejected("-a", 1, "invalid number");
  check_rejected("1e", 2, "digit expected in exponent");
  check_rejected("1e+", 3, "digit expected in exponent");
  check_rejected("NaN", 0, "unexpected character");
  check_rejected("-Infinity", 1, "invalid number");
  check_rejected("1e400", 0, "number out of range");
  check_rejected("[0, -1e400]", 4, "number out of range");
  check_rejected("tru", 0, "invalid literal");
  check_rejected("nul", 0, "invalid literal");
  check_rejected("True", 0, "unexpected character");
  check_rejected("[1,]", 3, "unexpected character");
  check_rejected("[1 2]", 3, "expected ',' or ']'");
  check_rejected("[1", 2, "expected ',' or ']'");
  check_rejected(R"({"a" 1})", 5, "expected ':'");
  check_rejected("{1:2}", 1, "expected string key");
  check_rejected(R"({"a":1,})", 7, "expected string key");
  check_rejected(R"({"a":1 "b":2})", 7, "expected ',' or '}'");
}

TEST_CASE("plugin json: nesting is limited to 256 levels") {
  const auto nested = [](std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
  };
  const Json ok = Json::parse(nested(256));
  const Json* inner = &ok;
  for (int level = 1; level < 256; ++level) inner = &(*inner)[0];
  CHECK(inner->is_array());
  CHECK(inner->empty());
  check_rejected(nested(257), 256, "nested too deeply");

  std::string objects;
  for (int i = 0; i < 257; ++i) objects += R"({"a":)";
  objects += "1" + std::string(257, '}');
  check_rejected(objects, 256 * 5, "nested too deeply");

  // Hostile input must fail cleanly instead of overflowing the stack.
  check_rejected(std::string(100000, '['), 256, "nested too deeply");
}

TEST_CASE("plugin json: numbers parse to int64 or double") {
  const Json max = Json::parse("9223372036854775807");
  CHECK(max.is_integer());
  CHECK(max.as_int() == std::numeric_limits<std::int64_t>::max());
  CHECK(max.dump() == "9223372036854775807");

  const Json over = Json::parse("9223372036854775808");
  CHECK(over.is_number());
  CHECK_FALSE(over.is_integer());
  CHECK(over.as_number() == 9223372036854775808.0);

  CHECK(Json::parse("-9223372036854775808").as_int() == std::numeric_limits<std::int64_t>::min());
  CHECK_FALSE(Json::parse("-9223372036854775809").is_integer());

  const Json zero = Json::parse("-0");
  CHECK(zero.is_number());
  CHECK(zero.as_number() == 0.0);
  CHECK(std::signbit(Json::parse("-0.0").as_number()));

  const Json sci = Json::parse("1.5e3");
  CHECK_FALSE(sci.is_integer());
  CHECK(sci.as_number() == 1500.0);
  CHECK(sci.as_int() == 1500);
  CHECK(Json::parse("1E-2").as_number() == 0.01);
  CHECK(Json::parse("2e+2").as_number() == 200.0);
  CHECK(Json::parse("-12.25").as_number() == -12.25);
  CHECK(Json::parse(" 42 ").as_int() == 42);
  CHECK(Json::parse("1" + std::string(300, '0')).as_number() == 1e300);
}

TEST_CASE("plugin json: duplicate keys keep the last value") {
  const Json j = Json::parse(R"({"a":1,"b":2,"a":3})");
  CHECK(j.size() == 2);
  CHECK(j["a"].as_int() == 3);
  CHECK(j.dump() == R"({"a":3,"b":2})");

  std::string many = "{";
  for (int i = 0; i < 10000; ++i)
    many += "\"k\":" + std::to_string(i) + ",\"u" + std::to_string(i) + "\":0,";
  many += "\"k\":-1}";
  const Json big = Json::parse(many);
  CHECK(big.size() == 10001);
  CHECK(big["k"].as_int() == -1);
  CHECK(big.members().front().first == "k");
}

TEST_CASE("plugin json: equality is deep and by value") {
  CHECK(Json(1) == Json(1.0));
  CHECK(Json(1.0) == Json(1));
  CHECK(Json(1) != Json(1.5));
  CHECK(Json(std::numeric_limits<std::int64_t>::max()) != Json(9223372036854775808.0));
  CHECK(Json::parse("-0") == Json::parse("0.0"));
  CHECK(Json() == Json(nullptr));
  CHECK(Json(true) != Json(1));
  CHECK(Json("1") != Json(1));
  CHECK(Json(std::nan("")) != Json(std::nan("")));
  CHECK(Json::parse(R"({"a":1,"b":[1,2]})") == Json::parse(R"({"b":[1.0,2],"a":1})"));
  CHECK(Json::parse(R"({"a":1})") != Json::parse(R"({"a":1,"b":2})"));
  CHECK(Json::parse(R"({"a":1,"c":2})") != Json::parse(R"({"a":1,"b":2})"));
  CHECK(Json::parse("[1,2]") != Json::parse("[2,1]"));
  CHECK(Json::parse("[1,2]") != Json::parse("[1,2,3]"));
  CHECK(Json::array() != Json::object());
  CHECK(Json(5) == 5);  // implicit conversions apply
  CHECK(Json("x") == "x");
}

TEST_CASE("plugin json: try_parse returns nullopt instead of throwing") {
  CHECK_FALSE(Json::try_parse("[").has_value());
  CHECK_FALSE(Json::try_parse("").has_value());
  const auto ok = Json::try_parse(R"({"a":[1]})");
  REQUIRE(ok.has_value());
  CHECK((*ok)["a"][0].as_int() == 1);
}
