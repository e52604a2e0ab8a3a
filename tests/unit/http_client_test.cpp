#include <doctest/doctest.h>

#include "transport/http_client.hpp"

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
