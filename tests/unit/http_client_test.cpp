#include <doctest/doctest.h>

#include "transport/http_client.hpp"
#include "transport/message_head.hpp"

using namespace mcpgw;

TEST_CASE("http client: urls") {
  auto u = transport::Url::parse("https://api.example.com/mcp?x=1");
  REQUIRE(u.ok());
  CHECK(u->tls);
  CHECK(u->host == "api.example.com");
  CHECK(u->port == "443");
  CHECK(u->target == "/mcp?x=1");
  CHECK(u->host_header == "api.example.com");
  CHECK(u->text() == "https://api.example.com/mcp?x=1");

  u = transport::Url::parse("http://[::1]:9000");
  REQUIRE(u.ok());
  CHECK(!u->tls);
  CHECK(u->host == "::1");
  CHECK(u->port == "9000");
  CHECK(u->target == "/");
  CHECK(u->host_header == "[::1]:9000");

  u = transport::Url::parse("http://127.0.0.1:8080?q");
  REQUIRE(u.ok());
  CHECK(u->target == "/?q");

  for (const char* bad : {"ftp://x/", "http://", "http://:80/", "http://h:80x/", "http://u:p@h/", "http://[::1/",
                          "http://h:123456/"}) {
    CAPTURE(bad);
    CHECK(!transport::Url::parse(bad).ok());
  }
}

TEST_CASE("http client: a request's head") {
  auto url = transport::Url::parse("http://127.0.0.1:9000/mcp");
  REQUIRE(url.ok());
  transport::HttpRequest req{"POST", {{"Content-Type", "application/json"}, {"user-agent", "client/2"},
                                      {"Content-Length", "999"}, {"Mcp-Session-Id", "s1"}, {"mcp-session-id", "s2"}},
                             R"({"a":1})", ""};
  auto head = transport::request_head(*url, req);
  REQUIRE(head);
  // A header named again replaces the earlier one, in its place; the
  // framing is the exchange's own.
  CHECK(*head ==
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:9000\r\nUser-Agent: client/2\r\nContent-Type: application/json\r\n"
        "Mcp-Session-Id: s2\r\nContent-Length: 7\r\n\r\n");

  // No body and a method that carries none: no Content-Length; another target.
  transport::HttpRequest get{"GET", {}, "", "/other?x=1"};
  head = transport::request_head(*url, get);
  REQUIRE(head);
  CHECK(*head == "GET /other?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9000\r\nUser-Agent: mcpgw/" MCPGW_VERSION "\r\n\r\n");
  // An empty POST still says its length.
  transport::HttpRequest empty{"POST", {}, "", ""};
  CHECK(transport::request_head(*url, empty)->find("Content-Length: 0\r\n") != std::string::npos);

  // What would split the head is refused, whatever carried it.
  for (auto bad : {transport::Headers{{"X-A", "v\r\nInjected: 1"}}, transport::Headers{{"X-A\n", "v"}},
                   transport::Headers{{"", "v"}}, transport::Headers{{"X-A", std::string("v\0w", 3)}}}) {
    transport::HttpRequest r{"POST", bad, "{}", ""};
    CHECK(!transport::request_head(*url, r));
  }
  transport::HttpRequest target{"GET", {}, "", "/a\r\nX: y"};
  CHECK(!transport::request_head(*url, target));
}

TEST_CASE("http client: more headers than the head keeps on the stack") {
  auto url = transport::Url::parse("http://h/");
  REQUIRE(url.ok());
  transport::HttpRequest req{"GET", {}, "", ""};
  for (int i = 0; i < 40; ++i) req.headers.emplace_back("X-H" + std::to_string(i), std::to_string(i));
  req.headers.emplace_back("x-h39", "last");
  auto head = transport::request_head(*url, req);
  REQUIRE(head);
  CHECK(head->find("X-H0: 0\r\n") != std::string::npos);
  CHECK(head->find("X-H20: 20\r\n") != std::string::npos);
  CHECK(head->find("X-H39: last\r\n") != std::string::npos);
  CHECK(head->find("39\r\n") == std::string::npos);
}

TEST_CASE("listener: a response's head is its status line, its headers, its length and whether it closes") {
  transport::http::Response r{200, {{"Content-Type", "application/json"}, {"Mcp-Session-Id", "a"},
                                    {"mcp-session-id", "b"}, {"Content-Length", "999"}, {"Connection", "upgrade"}},
                              R"({"x":1})"};
  auto head = transport::response_head(r, true);
  REQUIRE(head);
  CHECK(*head == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: b\r\nContent-Length: 7\r\n\r\n");
  head = transport::response_head(r, false);
  REQUIRE(head);
  CHECK(head->ends_with("Content-Length: 7\r\nConnection: close\r\n\r\n"));
  // Statuses without a body say no length; an empty 202 says 0.
  CHECK(*transport::response_head({204, {}, ""}, true) == "HTTP/1.1 204 No Content\r\n\r\n");
  CHECK(*transport::response_head({304, {}, ""}, true) == "HTTP/1.1 304 Not Modified\r\n\r\n");
  CHECK(*transport::response_head({202, {}, ""}, true) == "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
  CHECK(transport::response_head({413, {}, "x"}, true)->starts_with("HTTP/1.1 413 Payload Too Large\r\n"));
  // What would split the head is refused.
  CHECK(!transport::response_head({200, {{"X-A", "v\r\nSet-Cookie: x"}}, ""}, true));
  CHECK(!transport::response_head({200, {{"", "v"}}, ""}, true));
}
