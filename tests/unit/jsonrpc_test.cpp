#include <doctest/doctest.h>

#include <limits>

#include "jsonrpc/message.hpp"

using namespace mcpgw;

namespace {
json::Document parse_ok(const std::string& s) {
  auto d = json::parse(s);
  REQUIRE(d.ok());
  return std::move(*d);
}
int error_code(const std::string& response) {
  auto d = parse_ok(response);
  return d["error"]["code"].GetInt();
}
}  // namespace

TEST_CASE("jsonrpc: requests, notifications and responses are classified") {
  auto p = jsonrpc::parse(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}})");
  REQUIRE(p.messages.size() == 1);
  CHECK(p.messages[0].is_request());
  CHECK(p.messages[0].method() == "tools/list");
  CHECK(p.messages[0].id().int64() == 7);

  p = jsonrpc::parse(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  REQUIRE(p.messages.size() == 1);
  CHECK(p.messages[0].is_notification());

  p = jsonrpc::parse(R"({"jsonrpc":"2.0","id":"a","result":{}})");
  REQUIRE(p.messages.size() == 1);
  CHECK(p.messages[0].kind() == jsonrpc::Kind::Response);

  p = jsonrpc::parse(R"({"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"x"}})");
  REQUIRE(p.messages.size() == 1);
  CHECK(p.messages[0].kind() == jsonrpc::Kind::ErrorResponse);
}

TEST_CASE("jsonrpc: malformed input gets the standard errors") {
  auto p = jsonrpc::parse("{not json");
  REQUIRE(p.errors.size() == 1);
  CHECK(p.messages.empty());
  CHECK(error_code(p.errors[0]) == jsonrpc::kParseError);

  struct Case {
    const char* body;
    const char* why;
  } cases[] = {
      {R"({"id":1,"method":"x"})", "jsonrpc missing"},
      {R"({"jsonrpc":"1.0","id":1,"method":"x"})", "wrong version"},
      {R"({"jsonrpc":"2.0","id":1,"method":5})", "method not a string"},
      {R"({"jsonrpc":"2.0","id":{},"method":"x"})", "object id"},
      {R"({"jsonrpc":"2.0","id":1,"method":"x","params":3})", "scalar params"},
      {R"({"jsonrpc":"2.0","id":1})", "neither request nor response"},
      {R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1}})", "both result and error"},
      {R"({"jsonrpc":"2.0","id":1,"error":{"message":"no code"}})", "error without code"},
      {R"("just a string")", "not an object"},
      {R"([])", "empty batch"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.why);
    auto r = jsonrpc::parse(c.body);
    CHECK(r.messages.empty());
    REQUIRE(r.errors.size() == 1);
    CHECK(error_code(r.errors[0]) == jsonrpc::kInvalidRequest);
  }
}

TEST_CASE("jsonrpc: an invalid request keeps its id in the error") {
  auto p = jsonrpc::parse(R"({"jsonrpc":"2.0","id":42,"method":7})");
  REQUIRE(p.errors.size() == 1);
  auto d = parse_ok(p.errors[0]);
  CHECK(d["id"].GetInt() == 42);
  // A string id outlives the invalid message it came from (single and batch).
  p = jsonrpc::parse(R"({"jsonrpc":"2.0","id":"a-long-string-id-that-is-not-inlined","method":7})");
  REQUIRE(p.errors.size() == 1);
  CHECK(std::string(parse_ok(p.errors[0])["id"].GetString()) == "a-long-string-id-that-is-not-inlined");
  p = jsonrpc::parse(R"([{"jsonrpc":"2.0","id":"another-long-string-id-for-the-batch","method":7}])");
  REQUIRE(p.errors.size() == 1);
  CHECK(std::string(parse_ok(p.errors[0])["id"].GetString()) == "another-long-string-id-for-the-batch");
}

TEST_CASE("jsonrpc: an id comes back exactly as the client wrote it") {
  // Beyond a double's precision, fractions, exponents, a negative zero:
  // RapidJSON reads each as a number that writes back differently.
  const char* ids[] = {"22222222222222222222222222222222222222222222222222222221", "1.50", "1e2", "-0",
                       "-9223372036854775809", "18446744073709551616", "0.1000000000000000055511151231257827"};
  for (const char* id : ids) {
    CAPTURE(id);
    std::string body = std::string(R"({"jsonrpc":"2.0","id":)") + id + R"(,"method":"ping"})";
    auto p = jsonrpc::parse(body);
    REQUIRE(p.messages.size() == 1);
    CHECK(p.messages[0].id().json() == id);
    std::string reply = jsonrpc::make_result(p.messages[0].id(), json::Value(rapidjson::kObjectType));
    CHECK(reply == std::string(R"({"jsonrpc":"2.0","id":)") + id + R"(,"result":{}})");
    CHECK(jsonrpc::make_error(p.messages[0].id(), -1, "x").find(std::string("\"id\":") + id + ",") != std::string::npos);
    // An invalid request's error keeps it too, and so does each member of a batch.
    auto bad = jsonrpc::parse(std::string(R"({"jsonrpc":"2.0","id":)") + id + R"(,"method":7})");
    REQUIRE(bad.errors.size() == 1);
    CHECK(bad.errors[0].find(std::string("\"id\":") + id + ",") != std::string::npos);
    auto batch = jsonrpc::parse(std::string(R"([1,{"jsonrpc":"2.0","id":3.25,"method":"a","params":{"id":1.0}},)") +
                                R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"b"}])");
    REQUIRE(batch.messages.size() == 2);
    CHECK(batch.messages[0].id().json() == "3.25");
    CHECK(batch.messages[1].id().json() == id);
    // Parsed from a line it came in, an upstream's message keeps it as well.
    auto doc = json::parse(body);
    REQUIRE(doc);
    auto m = jsonrpc::Message::from(std::move(*doc), body);
    REQUIRE(m);
    CHECK(m->id().json() == id);
  }
  // Two ids a double cannot tell apart stay two ids.
  auto a = jsonrpc::parse(R"({"jsonrpc":"2.0","id":9007199254740993.0,"method":"ping"})");
  auto b = jsonrpc::parse(R"({"jsonrpc":"2.0","id":9007199254740992.0,"method":"ping"})");
  CHECK(!(a.messages[0].id() == b.messages[0].id()));
  CHECK(a.messages[0].id().int64() == std::nullopt);
  auto s = jsonrpc::parse(R"({"jsonrpc":"2.0","id":"a\u0062","method":"ping"})");
  CHECK(s.messages[0].id().string() == "ab");
  CHECK(s.messages[0].id().is_string());
  CHECK(jsonrpc::Id().json() == "null");
}

TEST_CASE("jsonrpc: a batch yields its valid members and an error per invalid one") {
  auto p = jsonrpc::parse(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"bad":true},
                              {"jsonrpc":"2.0","method":"notifications/x"}])");
  CHECK(p.batch);
  CHECK(p.messages.size() == 2);
  REQUIRE(p.errors.size() == 1);
  CHECK(error_code(p.errors[0]) == jsonrpc::kInvalidRequest);
}

TEST_CASE("jsonrpc: builders produce valid messages") {
  json::Value id(5);
  json::Document result = parse_ok(R"({"ok":true})");
  auto d = parse_ok(jsonrpc::make_result(id, result));
  CHECK(d["id"].GetInt() == 5);
  CHECK(d["result"]["ok"].GetBool());

  d = parse_ok(jsonrpc::make_result_raw(id, R"({"tools":[]})"));
  CHECK(d["result"]["tools"].IsArray());

  json::Document data = parse_ok(R"({"detail":"x"})");
  d = parse_ok(jsonrpc::make_error(id, jsonrpc::kInvalidParams, "bad \"quote\"", &data));
  CHECK(d["error"]["code"].GetInt() == -32602);
  CHECK(std::string(d["error"]["message"].GetString()) == "bad \"quote\"");
  CHECK(std::string(d["error"]["data"]["detail"].GetString()) == "x");

  d = parse_ok(jsonrpc::make_request(9, "tools/call", &data));
  CHECK(d["id"].GetInt64() == 9);
  CHECK(std::string(d["method"].GetString()) == "tools/call");

  d = parse_ok(jsonrpc::make_notification("notifications/cancelled", nullptr));
  CHECK(!d.HasMember("id"));
  CHECK(!d.HasMember("params"));

  json::Document err = parse_ok(R"({"code":-32000,"message":"deliberate","data":[1]})");
  d = parse_ok(jsonrpc::make_error_response(id, err));
  CHECK(d["error"]["code"].GetInt() == -32000);
  CHECK(d["error"]["data"][0].GetInt() == 1);
}

TEST_CASE("json: helpers") {
  auto d = parse_ok(R"({"a":"x","b":1})");
  CHECK(json::get_string(d, "a") == std::string_view("x"));
  CHECK(!json::get_string(d, "b"));
  CHECK(!json::get_string(d, "missing"));
  json::set(d, "a", json::Value(2), d.GetAllocator());
  CHECK(d["a"].GetInt() == 2);
  CHECK(json::quote("a\"b\n") == R"("a\"b\n")");
  CHECK(!json::parse("{} trailing").ok());
}

TEST_CASE("json: deep copies and clones are whole and independent of their source") {
  const std::string text = R"({"s":"a string longer than the inline size","n":[1,-2,3.5,true,null,{"k":[]}],"o":{"x":{}}})";
  auto src = parse_ok(text);
  json::Document target(rapidjson::kObjectType);
  target.AddMember("copied", json::copy(src, target.GetAllocator()), target.GetAllocator());
  json::Document cloned = json::clone(src);
  json::Document scalar = json::clone(src["s"]);
  // The source is changed and then freed: the copies keep their own text.
  src["s"].SetString("changed", src.GetAllocator());
  src = parse_ok("[]");
  CHECK(json::write(target["copied"]) == text);
  CHECK(json::write(cloned) == text);
  CHECK(json::write(scalar) == R"("a string longer than the inline size")");
  CHECK(json::write(json::copy(json::Value(7), target.GetAllocator())) == "7");
  // A string the source only referred to is referred to by the copy too.
  static const char kConst[] = "not owned";
  json::Value holder(rapidjson::kArrayType);
  holder.PushBack(json::Value(rapidjson::StringRef(kConst)), target.GetAllocator());
  json::Value ref_copy = json::copy(holder, target.GetAllocator());
  CHECK(ref_copy[0].GetString() == kConst);
  // The deepest document parse() accepts copies too.
  std::string deep = std::string(256, '[') + std::string(256, ']');
  CHECK(json::write(json::clone(parse_ok(deep))) == deep);
}

TEST_CASE("json: a thread's build stack serves one document at a time, any size") {
  json::ScratchStack& s = json::ScratchStack::shared();
  void* first = s.Malloc(256);
  REQUIRE(first != nullptr);
  // Held: a second stack meanwhile is memory of its own, grown and freed apart.
  void* second = s.Malloc(256);
  REQUIRE(second != nullptr);
  CHECK(second != first);
  second = s.Realloc(second, 256, 4096);
  REQUIRE(second != nullptr);
  json::ScratchStack::Free(second);
  first = s.Realloc(first, 256, 1024);
  REQUIRE(first != nullptr);
  static_cast<char*>(first)[1023] = 'x';
  json::ScratchStack::Free(first);
  // Given back: the next document gets the same block, already large enough.
  void* again = s.Malloc(512);
  CHECK(again == first);
  json::ScratchStack::Free(again);
  json::ScratchStack::Free(nullptr);
  // A huge message grows the stack past what a thread keeps: it is given
  // back, and the next document gets a stack again.
  std::string wide = "[1";
  for (int i = 0; i < 30000; ++i) wide += ",1";  // 480 KB of values on the stack
  wide += "]";
  auto big = parse_ok(wide);
  CHECK(big[1].GetInt() == 1);
  CHECK(json::write(json::clone(big)) == wide);
  void* after = s.Malloc(64);
  REQUIRE(after != nullptr);
  json::ScratchStack::Free(after);
}

TEST_CASE("json: hostile nesting is refused, not recursed into") {
  std::string deep(200000, '[');
  auto d = json::parse(deep);
  REQUIRE(!d.ok());
  CHECK(d.error().find("nested deeper") != std::string::npos);
  std::string ok = std::string(200, '[') + std::string(200, ']');
  CHECK(json::parse(ok).ok());
  // Brackets inside strings do not count.
  CHECK(json::parse("[\"" + std::string(1000, '[') + "\"]").ok());
  CHECK(json::parse(R"(["\"[[["])").ok());
  auto p = jsonrpc::parse(deep);
  REQUIRE(p.errors.size() == 1);
  CHECK(error_code(p.errors[0]) == jsonrpc::kParseError);
}

TEST_CASE("json: numbers that RapidJSON's full-precision path misread or crashed on parse safely") {
  // Found by tests/fuzz: under kParseFullPrecisionFlag these crashed the
  // process or came back as other numbers.
  auto crash = json::parse(R"({"a":128.74836467836484838364836483643636483648e-336})");
  REQUIRE(crash);
  CHECK((*crash)["a"].GetDouble() >= 0.0);
  CHECK((*crash)["a"].GetDouble() < 1e-300);
  auto zero = json::parse(R"({"a":0e100})");
  REQUIRE(zero);
  CHECK((*zero)["a"].GetDouble() == 0.0);
  auto big = json::parse(R"({"a":1844674407370955161580})");
  REQUIRE(big);
  CHECK((*big)["a"].GetDouble() == doctest::Approx(1.844674407370955e21));
  // Beyond a double, however it is spelled, a number is refused like
  // 1e400, never held as infinity and passed on changed (fuzz_jsonrpc found
  // a long mantissa with a large exponent read as infinity).
  for (const char* text : {R"({"a":2e308,"b":1})", R"({"a":-2e308})",
                           R"({"id":200900000000000000000000292233575820480e280})", R"([1e400])"}) {
    CAPTURE(text);
    auto inf = json::parse(text);
    REQUIRE_FALSE(inf);
    CHECK(inf.error().find("Number too big") != std::string::npos);
  }
  // A document built with infinity is written with null there, never as
  // cut-short text.
  json::Document built;
  built.SetObject();
  built.AddMember("a", std::numeric_limits<double>::infinity(), built.GetAllocator());
  CHECK(json::write(built) == R"({"a":null})");
}

TEST_CASE("jsonrpc: an unreadable message names the request it answers, when it is an answer") {
  struct Case {
    const char* text;
    std::optional<std::int64_t> answers;
    const char* why;
  } cases[] = {
      {R"({"jsonrpc":"2.0","id":3,"result":{"t":"\ud83d"}})", 3, "surrogate"},
      {R"({"jsonrpc":"2.0","result":{"n":1e400},"id":4})", 4, "Number too big"},
      {R"({"jsonrpc":"2.0","id":5,"error":"it broke"})", 5, "\"error\" must be an object"},
      {R"({"jsonrpc":"2.0","id":6,"result":{},"error":{"code":1,"message":"x"}})", 6, "both \"result\" and \"error\""},
      {R"({"id":7,"result":{}})", 7, "\"jsonrpc\" must be \"2.0\""},
      // A request or notification is never taken for an answer, nor is a
      // string or fractional id (ours are integers).
      {R"({"jsonrpc":"2.0","id":8,"method":7})", std::nullopt, "\"method\" must be a string"},
      {R"({"jsonrpc":"2.0","id":9,"params":{"t":"\ud83d"},"method":"x"})", std::nullopt, "surrogate"},
      {R"({"id":"10","result":{}})", std::nullopt, "\"jsonrpc\""},
      {R"({"id":11.5,"result":{}})", std::nullopt, "\"jsonrpc\""},
      {R"({"jsonrpc":"2.0","result":{"id":12,"t":"\ud83d"}})", std::nullopt, "surrogate"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto r = jsonrpc::read(c.text);
    auto* bad = std::get_if<jsonrpc::Unreadable>(&r);
    REQUIRE(bad);
    CHECK(bad->answers == c.answers);
    CHECK(bad->why.find(c.why) != std::string::npos);
  }
  auto good = jsonrpc::read(R"({"jsonrpc":"2.0","id":1e2,"result":{}})");
  REQUIRE(std::holds_alternative<jsonrpc::Message>(good));
  CHECK(std::get<jsonrpc::Message>(good).id().json() == "1e2");
  // The beginning of a message too large to keep still names its request.
  CHECK(jsonrpc::answer_id_in(R"({"jsonrpc":"2.0","id":42,"result":{"content":[{"text":"aaaa)") == 42);
  CHECK(jsonrpc::answer_id_in(R"({"jsonrpc":"2.0","method":"x","id":42,"params":{)") == std::nullopt);
}
