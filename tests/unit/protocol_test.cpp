#include <doctest/doctest.h>

#include "catalog/naming.hpp"
#include "mcp/protocol.hpp"
#include "transport/http_server.hpp"
#include "transport/sse.hpp"

using namespace mcpgw;

TEST_CASE("mcp: version negotiation") {
  CHECK(mcp::negotiate("2025-06-18") == "2025-06-18");
  CHECK(mcp::negotiate("2025-03-26") == "2025-03-26");
  CHECK(mcp::negotiate("1999-01-01") == mcp::kLatestVersion);
  CHECK(mcp::is_supported("2025-11-25"));
  CHECK(!mcp::is_supported(""));
}

TEST_CASE("mcp: cursors round-trip and foreign ones are rejected") {
  CHECK(mcp::decode_cursor(mcp::encode_cursor(0)) == 0u);
  CHECK(mcp::decode_cursor(mcp::encode_cursor(12345)) == 12345u);
  CHECK(!mcp::decode_cursor(""));
  CHECK(!mcp::decode_cursor("o"));
  CHECK(!mcp::decode_cursor("x12"));
  CHECK(!mcp::decode_cursor("o12x"));
  CHECK(!mcp::decode_cursor("o-1"));
}

TEST_CASE("mcp: tool_error is an isError result with one text item") {
  auto d = mcp::tool_error("upstream 'bank' timed out");
  CHECK(d["isError"].GetBool());
  CHECK(std::string(d["content"][0]["type"].GetString()) == "text");
  CHECK(std::string(d["content"][0]["text"].GetString()) == "upstream 'bank' timed out");
}

TEST_CASE("naming: exposed names and descriptions") {
  config::Naming n;
  CHECK(catalog::exposed_name(n, "bank", "list_accounts", true) == "bank:list_accounts");
  CHECK(catalog::exposed_name(n, "bank", "list_accounts", false) == "list_accounts");
  n.separator = "__";
  CHECK(catalog::exposed_name(n, "bank", "x", true) == "bank__x");
  CHECK(catalog::exposed_description(n, "bank", "Lists accounts") == "[Proxied from bank] Lists accounts");
  CHECK(catalog::exposed_description(n, "bank", "") == "[Proxied from bank]");
  n.description_prefix = "{server}/{server}: ";
  CHECK(catalog::exposed_description(n, "a", "d") == "a/a: d");
  n.description_prefix = "";
  CHECK(catalog::exposed_description(n, "a", "d") == "d");
}

TEST_CASE("sse: parser handles split chunks, CRLF, multi-line data and comments") {
  std::vector<std::pair<std::string, std::string>> got;
  transport::sse::Parser p([&](std::string_view ev, std::string_view data) {
    got.emplace_back(std::string(ev), std::string(data));
    return true;
  });
  CHECK(p.feed(": ping\n\nevent: message\nda"));
  CHECK(p.feed("ta: {\"a\":1}\r"));
  CHECK(p.feed("\n\r\ndata: x\ndata: y\n\nid: 3\n\n"));
  REQUIRE(got.size() == 2);
  CHECK(got[0] == std::pair<std::string, std::string>{"message", "{\"a\":1}"});
  CHECK(got[1] == std::pair<std::string, std::string>{"message", "x\ny"});
  CHECK(transport::sse::format_event("{}") == "event: message\ndata: {}\n\n");
}

TEST_CASE("sse: a callback returning false stops the parser") {
  int n = 0;
  transport::sse::Parser p([&](std::string_view, std::string_view) { return ++n < 1; });
  CHECK(!p.feed("data: 1\n\ndata: 2\n\n"));
  CHECK(n == 1);
}

TEST_CASE("http: loopback hosts") {
  CHECK(transport::is_loopback_host("localhost"));
  CHECK(transport::is_loopback_host("localhost:8080"));
  CHECK(transport::is_loopback_host("127.0.0.1:1"));
  CHECK(transport::is_loopback_host("127.1.2.3"));
  CHECK(transport::is_loopback_host("[::1]:80"));
  CHECK(transport::is_loopback_host("::1"));
  CHECK(!transport::is_loopback_host("evil.example.com"));
  CHECK(!transport::is_loopback_host("localhost.evil.com"));
  CHECK(!transport::is_loopback_host("128.0.0.1"));
  CHECK(!transport::is_loopback_host("0.0.0.0"));
}
