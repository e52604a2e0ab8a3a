#include <arpa/inet.h>
#include <boost/asio/strand.hpp>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "transport/http_client.hpp"
#include "transport/message_head.hpp"
#include "util/offload.hpp"

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

namespace {

/// A loopback HTTP server on a thread of its own that answers the requests
/// of one connection with `replies`, in order, each written in the pieces
/// given (a reply's pieces go by separate writes), and then closes it.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::vector<std::vector<std::string>> replies) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd_, 1) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this, replies = std::move(replies)] {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string got;
      char buf[4096];
      for (const auto& pieces : replies) {
        // Each request is a head without a body (GET).
        std::size_t end;
        while ((end = got.find("\r\n\r\n")) == std::string::npos) {
          ssize_t n = ::read(c, buf, sizeof buf);
          if (n <= 0) break;
          got.append(buf, static_cast<std::size_t>(n));
        }
        if (end == std::string::npos) break;
        got.erase(0, end + 4);
        for (const auto& p : pieces) ::send(c, p.data(), p.size(), MSG_NOSIGNAL);
      }
      ::close(c);
    });
  }
  ~ScriptedServer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

 private:
  int fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int port_ = 0;
  std::thread thread_;
};

/// One GET by `client`: the result, what came through OnData, and what
/// went into the buffer IntoBuffer gave (none when `give` is false).
struct Got {
  transport::HttpResult result;
  std::string on_data;
  std::string into;
  bool asked = false;  ///< IntoBuffer was called
};
Got get_once(transport::Io& io, const std::shared_ptr<transport::HttpClient>& client, bool give) {
  auto run = [](std::shared_ptr<transport::HttpClient> c, asio::any_io_executor ex, bool give) -> Task<Got> {
    Got g;
    auto abort = transport::Abort::start(ex, transport::Abort::Clock::now() + std::chrono::seconds(30), nullptr);
    transport::HttpRequest req{"GET", {}, {}, {}};
    g.result = co_await c->exchange(
        req, *abort, [](const transport::HttpHead&) { return true; },
        [&g](std::string_view d) {
          g.on_data.append(d);
          return true;
        },
        [&g, give](std::size_t n) -> std::span<char> {
          g.asked = true;
          if (!give) return {};
          // Not zero: a byte the socket did not write would show.
          g.into.assign(n, '#');
          return {g.into.data(), n};
        });
    abort->disarm();
    co_return g;
  };
  auto strand = asio::make_strand(io.executor());
  return block_on(strand, run(client, strand, give), []() -> Got { throw std::runtime_error("the loop stopped"); });
}

}  // namespace

TEST_CASE("http client: a body of announced length is read into the caller's buffer, whole, and the connection kept") {
  std::string big(3 << 20, 'x');
  for (std::size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>('a' + (i / 4096) % 26);
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(big.size()) + "\r\n\r\n";
  ScriptedServer server({
      // The head with the body's first bytes, then the rest in two writes.
      {head + big.substr(0, 100), big.substr(100, 1 << 20), big.substr(100 + (1 << 20))},
      // Chunked: no length to size a buffer by, so through OnData.
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"},
      // A buffer refused: through OnData.
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nworld"},
      // Cut halfway: an error, and what came counted.
      {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345"},
  });
  transport::Io io(1);
  auto u = transport::Url::parse(server.url());
  REQUIRE(u);
  auto client = transport::HttpClient::create(io, *u, transport::TlsOptions{});
  REQUIRE(client);

  Got g = get_once(io, *client, true);
  CHECK(g.result.error == "");
  CHECK(g.asked);
  CHECK(g.on_data.empty());
  CHECK(g.result.body_bytes == big.size());
  CHECK(g.into == big);

  // The same connection (the server accepts one) is in the pool, with
  // nothing of the last body left in its buffer.
  g = get_once(io, *client, true);
  CHECK(g.result.error == "");
  CHECK(!g.asked);
  CHECK(g.on_data == "hello");

  g = get_once(io, *client, false);
  CHECK(g.result.error == "");
  CHECK(g.asked);
  CHECK(g.on_data == "world");

  g = get_once(io, *client, true);
  CHECK(g.result.error.find("connection closed while reading the response") == 0);
  CHECK(g.result.kind == transport::HttpError::Broken);
  CHECK(g.result.body_bytes == 5);
  CHECK(g.into.substr(0, 5) == "12345");
}
