// The OTLP side of telemetry that needs no collector: the sampling
// decisions. (The encoding is checked against the official definitions by
// tests/integration/otlp.test.mjs.)
#include <doctest/doctest.h>

#include "jsonrpc/id.hpp"
#include "mcp/span.hpp"
#include "telemetry/otlp.hpp"
#include "util/random.hpp"

using namespace mcpgw;

TEST_CASE("otlp: sampling by trace id ratio is all, none, or about the share asked, the same for one trace") {
  int kept = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    std::string id = unique_hex(16);
    CHECK(telemetry::sampled_by_ratio(id, 1.0));
    CHECK_FALSE(telemetry::sampled_by_ratio(id, 0.0));
    bool once = telemetry::sampled_by_ratio(id, 0.25);
    CHECK(once == telemetry::sampled_by_ratio(id, 0.25));
    if (once) ++kept;
  }
  // 1000 expected; 6 standard deviations (27) either way.
  CHECK(kept > 1000 - 170);
  CHECK(kept < 1000 + 170);
  CHECK(telemetry::sampled_by_ratio("00000000000000000000000000000000", 0.01));
  CHECK_FALSE(telemetry::sampled_by_ratio("ffffffffffffffffffffffffffffffff", 0.99));
}

TEST_CASE("otlp: the sampled flag of W3C trace flags") {
  CHECK(telemetry::sampled_flag("01"));
  CHECK(telemetry::sampled_flag("03"));
  CHECK_FALSE(telemetry::sampled_flag("00"));
  CHECK_FALSE(telemetry::sampled_flag("02"));
  CHECK_FALSE(telemetry::sampled_flag(""));
}

TEST_CASE("otlp: an export request holds every span, its ids as bytes") {
  mcp::Span s;
  s.set_ids("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "");
  s.name = "tools/call a:b";
  s.kind = mcp::Span::Kind::Server;
  s.set("mcp.method.name", "tools/call");
  telemetry::Resource r{{{"service.name", std::string("mcpgw")}}};
  std::string one = telemetry::encode_export_request({s}, r, "mcpgw", "1");
  std::string two = telemetry::encode_export_request({s, s}, r, "mcpgw", "1");
  CHECK(two.size() > one.size());
  CHECK(one.find("tools/call a:b") != std::string::npos);
  CHECK(one.find(std::string("\x4b\xf9\x2f\x35", 4)) != std::string::npos);
  CHECK(one.find("4bf92f35") == std::string::npos);
}

TEST_CASE("span: ids are decoded from every hex digit to their bytes; a missing parent is all zero") {
  mcp::Span s;
  s.set_ids("0123456789abcdeffedcba9876543210", "a0b1c2d3e4f50617", "");
  const std::array<std::uint8_t, 16> trace{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                           0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
  const std::array<std::uint8_t, 8> span{0xa0, 0xb1, 0xc2, 0xd3, 0xe4, 0xf5, 0x06, 0x17};
  CHECK(s.trace_id == trace);
  CHECK(s.span_id == span);
  CHECK_FALSE(s.has_parent());
  s.set_ids("0123456789abcdeffedcba9876543210", "a0b1c2d3e4f50617", "ffffffffffffffff");
  CHECK(s.parent_span_id == std::array<std::uint8_t, 8>{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
}

TEST_CASE("otlp: a span's entry is its field tag, its exact length and the span, whatever its size") {
  // Lengths of one, two and three varint bytes: a bare span, a usual one
  // and one with a status message beyond 16383 bytes.
  for (std::size_t message : {std::size_t{0}, std::size_t{300}, std::size_t{20000}}) {
    mcp::Span s;
    s.set_ids("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", message ? "1111111111111111" : "");
    if (message) s.fail("tool_error", std::string(message, 'x'));
    std::string entry;
    telemetry::append_span(entry, s);
    REQUIRE(entry.size() > 2);
    CHECK(static_cast<unsigned char>(entry[0]) == 0x12);  // field 2 (spans), length-delimited
    std::uint64_t length = 0;
    std::size_t at = 1;
    for (int shift = 0; at < entry.size(); shift += 7) {
      auto byte = static_cast<unsigned char>(entry[at++]);
      length |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) break;
    }
    CHECK(length == entry.size() - at);
    CHECK(entry[at] == 0x0a);  // the span starts with its trace id (field 1)
    CHECK(s.has_parent() == (message != 0));
  }
}

TEST_CASE("span: jsonrpc.request.id is a string id unescaped, a number as its sender wrote it, nothing for null") {
  auto id_attribute = [](std::string_view json_id) -> std::optional<std::string> {
    auto doc = json::parse(json_id);
    REQUIRE(doc);
    mcp::Span span;
    mcp::set_request_id(span, jsonrpc::Id(*doc));
    auto value = span.attribute("jsonrpc.request.id");
    return value ? std::optional<std::string>(*value) : std::nullopt;
  };
  CHECK(id_attribute(R"("a\"b")") == std::optional<std::string>(R"(a"b)"));
  CHECK(id_attribute("42") == std::optional<std::string>("42"));
  CHECK(id_attribute("null") == std::nullopt);
  // A message keeps an integer beyond a double's precision as its digits.
  mcp::Span span;
  mcp::set_request_id(span, jsonrpc::Id::number("12345678901234567890123"));
  CHECK(span.attribute("jsonrpc.request.id") == "12345678901234567890123");
}

TEST_CASE("span: attributes are kept in OTLP's encoding and read back, whatever their size") {
  mcp::Span span;
  const std::string long_uri(20000, 'u');  // past the room held in place, a three-byte length
  span.set("mcp.method.name", "resources/read");
  span.set("mcp.resource.uri", long_uri);
  span.set("empty", "");
  span.fail("timeout", "no answer");
  CHECK(span.attribute("mcp.method.name") == "resources/read");
  CHECK(span.attribute("mcp.resource.uri") == long_uri);
  CHECK(span.attribute("empty") == "");
  CHECK(span.attribute(mcp::kErrorType) == "timeout");
  CHECK(span.attribute("gen_ai.tool.name") == std::nullopt);
  // The encoded span holds them as they were written.
  std::string entry;
  telemetry::append_span(entry, span);
  CHECK(entry.find(long_uri) != std::string::npos);
  CHECK(entry.find("no answer") != std::string::npos);
}
