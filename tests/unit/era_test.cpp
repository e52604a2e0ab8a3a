#include <doctest/doctest.h>

#include "mcp/era.hpp"

using namespace mcpgw;

namespace {

jsonrpc::Message request(const char* text) {
  auto parsed = jsonrpc::parse(text);
  REQUIRE(parsed.messages.size() == 1);
  return std::move(parsed.messages.front());
}

int refusal_code(const std::variant<mcp::Envelope, mcp::Refusal>& r) {
  REQUIRE(std::holds_alternative<mcp::Refusal>(r));
  return std::get<mcp::Refusal>(r).code;
}

json::Document tool(const char* schema) {
  auto d = json::parse(std::string(R"({"name":"t","inputSchema":)") + schema + "}");
  REQUIRE(d);
  return std::move(*d);
}

}  // namespace

TEST_CASE("era: the envelope is checked in the revision's order") {
  auto ok = request(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
    "io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},
    "io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"notice"}}})");
  auto e = mcp::read_envelope(ok, std::string_view("2026-07-28"));
  REQUIRE(std::holds_alternative<mcp::Envelope>(e));
  CHECK(std::get<mcp::Envelope>(e).client_name == "c");
  CHECK(std::get<mcp::Envelope>(e).log_level == "notice");
  CHECK(json::find(std::get<mcp::Envelope>(e).capabilities, "sampling"));

  CHECK(refusal_code(mcp::read_envelope(request(R"({"jsonrpc":"2.0","id":1,"method":"x","params":{}})"), std::nullopt)) ==
        jsonrpc::kInvalidParams);
  // Missing keys come before a version mismatch, a mismatch before an
  // unsupported version.
  CHECK(refusal_code(mcp::read_envelope(
            request(R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v9"}}})"),
            std::string_view("2026-07-28"))) == jsonrpc::kInvalidParams);
  auto v999 = request(R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{
    "io.modelcontextprotocol/protocolVersion":"v999","io.modelcontextprotocol/clientCapabilities":{}}}})");
  CHECK(refusal_code(mcp::read_envelope(v999, std::string_view("2026-07-28"))) == mcp::kHeaderMismatch);
  auto unsupported = mcp::read_envelope(v999, std::string_view("v999"));
  CHECK(refusal_code(unsupported) == mcp::kUnsupportedVersion);
  const auto& data = std::get<mcp::Refusal>(unsupported).data;
  CHECK(std::string(data["requested"].GetString()) == "v999");
  CHECK(std::string(data["supported"][0].GetString()) == "2026-07-28");
  CHECK(refusal_code(mcp::read_envelope(
            request(R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
              "io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}})"),
            std::nullopt)) == jsonrpc::kInvalidParams);
}

TEST_CASE("era: header values are encoded when they must be, and decoded strictly") {
  CHECK(mcp::encode_header_value("us-west1") == "us-west1");
  CHECK(mcp::encode_header_value("us west 1") == "us west 1");
  CHECK(mcp::encode_header_value(" padded ") == "=?base64?IHBhZGRlZCA=?=");
  CHECK(mcp::encode_header_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?=");
  CHECK(mcp::encode_header_value("") == "=?base64?\?=");
  CHECK(mcp::encode_header_value("line1\nline2") == "=?base64?bGluZTEKbGluZTI=?=");
  CHECK(mcp::decode_header_value("  =?base64?SGVsbG8=?=\t") == "Hello");
  CHECK(mcp::decode_header_value("SGVsbG8=") == "SGVsbG8=");
  CHECK(mcp::decode_header_value("=?base64?SGVsbG8=") == "=?base64?SGVsbG8=");
  CHECK(!mcp::decode_header_value("=?base64?SGVsbG8?="));
  CHECK(!mcp::decode_header_value("=?base64?SGVs!!!bG8=?="));
  CHECK(mcp::header_matches("file:///a b.txt", "file:///a%20b.txt"));
  CHECK(mcp::header_matches("x", "x"));
  CHECK(!mcp::header_matches("y", "x"));
  CHECK(!mcp::header_matches("a%2", "a%2x"));
}

TEST_CASE("era: x-mcp-header declarations are validated and mirrored") {
  CHECK(mcp::x_mcp_header_problem(tool(R"({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}})")) == "");
  CHECK(mcp::x_mcp_header_problem(tool(R"({"type":"object","properties":{"r":{"type":"number","x-mcp-header":"R"}}})")) != "");
  CHECK(mcp::x_mcp_header_problem(tool(R"({"type":"object","properties":{"r":{"type":"string","x-mcp-header":"My Region"}}})")) != "");
  CHECK(mcp::x_mcp_header_problem(tool(R"({"type":"object","properties":{"r":{"type":"string","x-mcp-header":""}}})")) != "");
  CHECK(mcp::x_mcp_header_problem(tool(R"({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"F"},
    "b":{"type":"string","x-mcp-header":"f"}}})")) != "");
  CHECK(mcp::x_mcp_header_problem(tool(R"({"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"F"}}}})")) != "");

  auto t = tool(R"({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},
    "n":{"type":"integer","x-mcp-header":"N"},"v":{"type":"boolean","x-mcp-header":"V"},"q":{"type":"string"}}})");
  auto args = json::parse(R"({"region":"eu west","n":42,"v":false,"q":"free"})");
  auto h = mcp::param_headers(t, &*args);
  REQUIRE(h.size() == 3);
  CHECK(h[0] == std::pair<std::string, std::string>{"Mcp-Param-Region", "eu west"});
  CHECK(h[1] == std::pair<std::string, std::string>{"Mcp-Param-N", "42"});
  CHECK(h[2] == std::pair<std::string, std::string>{"Mcp-Param-V", "false"});
  auto nulls = json::parse(R"({"region":null})");
  CHECK(mcp::param_headers(t, &*nulls).empty());
}

TEST_CASE("era: results get resultType, cacheable ones their caching hints") {
  json::Document r(rapidjson::kObjectType);
  mcp::stamp_result(r, "tools/list", "public", r.GetAllocator());
  CHECK(std::string(r["resultType"].GetString()) == "complete");
  CHECK(r["ttlMs"].GetInt() == 0);
  CHECK(std::string(r["cacheScope"].GetString()) == "public");
  auto ir = json::parse(R"({"resultType":"input_required"})");
  mcp::stamp_result(*ir, "resources/read", "public", ir->GetAllocator());
  CHECK(!json::find(*ir, "ttlMs"));
  json::Document call(rapidjson::kObjectType);
  mcp::stamp_result(call, "tools/call", "private", call.GetAllocator());
  CHECK(!json::find(call, "cacheScope"));
}
