#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <string>

#include "transport/http_listener.hpp"
#include "transport/io.hpp"

using namespace mcpgw;
namespace http = transport::http;
using tcp = boost::asio::ip::tcp;

namespace {

/// A blocking client whose reads give up after 20 s, so that a hang fails
/// the test instead of stopping it (plain recv: Asio's synchronous reads
/// would wait again past SO_RCVTIMEO).
struct Client {
  boost::asio::io_context ctx;
  tcp::socket sock{ctx};
  std::string buffer;

  explicit Client(int port) {
    sock.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
    timeval tv{20, 0};
    ::setsockopt(sock.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  /// recv's result: bytes appended to buffer, 0 at end of file, -1 on error or timeout.
  ssize_t receive() {
    char chunk[4096];
    ssize_t n = ::recv(sock.native_handle(), chunk, sizeof chunk, 0);
    if (n > 0) buffer.append(chunk, static_cast<std::size_t>(n));
    return n;
  }
  /// One keep-alive GET and its whole answer (the body is "ok\n").
  std::string get(const std::string& target) {
    boost::asio::write(sock, boost::asio::buffer("GET " + target + " HTTP/1.1\r\nHost: t\r\n\r\n"));
    std::size_t end;
    while ((end = buffer.find("ok\n")) == std::string::npos)
      if (receive() <= 0) return "no answer";
    std::string answer = buffer.substr(0, end + 3);
    buffer.erase(0, end + 3);
    return answer;
  }
  /// True once the server closed the connection (end of file, nothing more sent).
  bool closed_by_server() { return receive() == 0 && buffer.empty(); }
};

}  // namespace

TEST_CASE("listener: a kept-alive connection answers each request, then is closed once idle past idle_timeout") {
  transport::Io io(1);
  http::ListenerOptions opts;
  opts.idle_timeout = std::chrono::milliseconds(200);
  http::Listener listener(io, opts, [](http::Request& req, http::Responder& res) -> Task<void> {
    http::Response r;
    r.headers = {{"Content-Type", "text/plain"}, {"X-Target", req.target}};
    r.body = "ok\n";
    co_await res.send(std::move(r));
  });
  auto port = listener.bind();
  REQUIRE(port.ok());
  listener.start();

  Client c(*port);
  // The first request waits on the deadline from accept; each later one on
  // the idle deadline, armed while the connection waits and disarmed when
  // the request comes.
  for (const char* target : {"/one", "/two", "/three"}) {
    CAPTURE(target);
    std::string answer = c.get(target);
    CHECK(answer.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(answer.find(std::string("X-Target: ") + target) != std::string::npos);
  }
  CHECK(c.closed_by_server());

  // The listener goes on: a new connection is served.
  Client again(*port);
  CHECK(again.get("/four").find("X-Target: /four") != std::string::npos);
  listener.stop();
  listener.wait();
  CHECK(listener.connections() == 0);
  io.stop();
}

TEST_CASE("listener: a body in pieces goes out whole and in order, however the socket takes it") {
  // 6 MiB in the shared piece: more than the socket takes at once, so the
  // write resumes inside each piece in turn.
  auto owner = std::make_shared<const std::string>(std::string(6 << 20, 'x') + "<end>");
  transport::Io io(1);
  http::Listener listener(io, {}, [owner](http::Request&, http::Responder& res) -> Task<void> {
    http::Response r;
    r.body = SplicedText("<head>", owner, *owner, "<tail>ok\n");
    co_await res.send(std::move(r));
  });
  auto port = listener.bind();
  REQUIRE(port.ok());
  listener.start();
  Client c(*port);
  std::string answer = c.get("/");
  const std::string body = answer.substr(answer.find("\r\n\r\n") + 4);
  CHECK(answer.find("Content-Length: " + std::to_string(body.size()) + "\r\n") != std::string::npos);
  CHECK(body == "<head>" + *owner + "<tail>ok\n");
  listener.stop();
  listener.wait();
  io.stop();
}
