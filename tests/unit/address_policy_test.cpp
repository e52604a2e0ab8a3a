// The SSRF guard of the gateway's OAuth client (transport/address_policy):
// every spelling of an address read as the system's resolver reads it (with
// glibc's inet_aton and inet_pton as the reference), the special-purpose
// ranges, the refusals' texts, and the HTTP client that checks a host and
// what it resolves to before connecting, and connects to nothing else.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/strand.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

#include "transport/address_policy.hpp"
#include "transport/http_client.hpp"
#include "util/offload.hpp"

using namespace mcpgw;
using namespace mcpgw::transport;

namespace {

std::string text_of(std::string_view host) {
  auto a = parse_ip(host);
  return a ? a->text() : "-";
}

AddressRule rule_of(std::string_view host) {
  auto a = parse_ip(host);
  REQUIRE_MESSAGE(a, host);
  return classify(*a);
}

}  // namespace

TEST_CASE("address policy: IPv4 in every form inet_aton reads") {
  CHECK(text_of("127.0.0.1") == "127.0.0.1");
  CHECK(text_of("127.1") == "127.0.0.1");              // a.b: b is 24 bits
  CHECK(text_of("127.0.1") == "127.0.0.1");            // a.b.c: c is 16 bits
  CHECK(text_of("2130706433") == "127.0.0.1");         // one 32-bit number
  CHECK(text_of("0177.0.0.1") == "127.0.0.1");         // octal
  CHECK(text_of("012.0.0.1") == "10.0.0.1");
  CHECK(text_of("012.1") == "10.0.0.1");
  CHECK(text_of("0x7f.1") == "127.0.0.1");             // hex
  CHECK(text_of("0X7F.0X0.0.01") == "127.0.0.1");
  CHECK(text_of("0xa9fea9fe") == "169.254.169.254");
  CHECK(text_of("2852039166") == "169.254.169.254");
  CHECK(text_of("0251.0376.0251.0376") == "169.254.169.254");
  CHECK(text_of("169.254.43518") == "169.254.169.254");
  CHECK(text_of("0") == "0.0.0.0");
  CHECK(text_of("00000000000000000000177.1") == "127.0.0.1");  // leading zeros do not overflow
  CHECK(text_of("4294967295") == "255.255.255.255");
  // What inet_aton refuses is a name, not an address.
  for (const char* name : {"4294967296", "256.0.0.1", "1.2.3.4.5", "08.0.0.1", "0x", "0x.1", "1..2", "1.2.3.",
                           ".1.2.3", "1.2.3.256", "1.16777216", "1.2.65536", "0xg", "-1", "+1", "1e3",
                           "example.com", "localhost", "1.2.3.4x", ""})
    CHECK_MESSAGE(!parse_ip(name), name);
}

TEST_CASE("address policy: IPv6 in every form RFC 4291 allows") {
  CHECK(text_of("::1") == "::1");
  CHECK(text_of("[::1]") == "::1");
  CHECK(text_of("::") == "::");
  CHECK(text_of("0:0:0:0:0:0:0:1") == "::1");
  CHECK(text_of("::ffff:127.0.0.1") == "::ffff:127.0.0.1");
  CHECK(text_of("::FFFF:7f00:1") == "::ffff:127.0.0.1");
  CHECK(text_of("0:0:0:0:0:ffff:a9fe:a9fe") == "::ffff:169.254.169.254");
  CHECK(text_of("::127.0.0.1") == "::7f00:1");
  CHECK(text_of("fe80::1%eth0") == "fe80::1");
  CHECK(text_of("fe80::1%25eth0") == "fe80::1");
  CHECK(text_of("fd00:ec2::254") == "fd00:ec2::254");
  CHECK(text_of("2001:db8:0:0:1:0:0:1") == "2001:db8::1:0:0:1");  // RFC 5952: the first of equal runs
  CHECK(text_of("2001:0db8:0000:0000:0000:0000:0002:0001") == "2001:db8::2:1");
  CHECK(text_of("1:2:3:4:5:6:7::") == "1:2:3:4:5:6:7:0");
  CHECK(text_of("1:0:3:4:5:6:7:8") == "1:0:3:4:5:6:7:8");  // one zero group is not compressed
  for (const char* bad : {":::", "1:::2", "1::2::3", ":1::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8::", "12345::",
                          "::g", "1:2:", "::ffff:1.2.3", "::ffff:1.2.3.4:5", "::ffff:256.0.0.1", "fe80::1%", "[::1",
                          "::1.2.3.4.5"})
    CHECK_MESSAGE(!parse_ip(bad), bad);
}

TEST_CASE("address policy: what glibc's inet_aton and inet_pton accept, parse_ip reads as the same address") {
  const char* inputs[] = {"127.0.0.1",  "127.1",         "0x7f.1",         "0177.1",      "2130706433", "1.2.3",
                          "10.1",       "0xffffffff",    "0377.0377.0377.0377", "0x0.0x0.0x0.0x1", "09",
                          "1.2.3.04",   "00",            "4294967296",     "1.256",       "::1",        "::ffff:10.0.0.1",
                          "fe80::a:b",  "2001:db8::1",   "1::",            "::1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8",
                          "::1.2.3.4",  "64:ff9b::8.8.8.8", "ffff::ffff:ffff:ffff:ffff:ffff:ffff:ffff", "0x1.0x2.0x3.0x4"};
  for (const char* s : inputs) {
    in_addr v4{};
    in6_addr v6{};
    auto ours = parse_ip(s);
    if (inet_aton(s, &v4)) {
      REQUIRE_MESSAGE(ours, s);
      CHECK_MESSAGE(!ours->v6, s);
      CHECK_MESSAGE(ours->v4_value() == ntohl(v4.s_addr), s);
    } else if (inet_pton(AF_INET6, s, &v6) == 1) {
      REQUIRE_MESSAGE(ours, s);
      CHECK_MESSAGE(ours->v6, s);
      CHECK_MESSAGE(std::memcmp(ours->bytes.data(), v6.s6_addr, 16) == 0, s);
      // (glibc writes an IPv4-compatible address in dotted form as well.)
      char back[INET6_ADDRSTRLEN];
      REQUIRE(inet_ntop(AF_INET6, v6.s6_addr, back, sizeof back));
      if (std::any_of(v6.s6_addr, v6.s6_addr + 12, [](unsigned char b) { return b != 0; }))
        CHECK_MESSAGE(ours->text() == back, s);
    } else {
      CHECK_MESSAGE(!ours, s);
    }
  }
}

TEST_CASE("address policy: the special-purpose ranges") {
  using R = AddressRule;
  CHECK(rule_of("8.8.8.8") == R::None);
  CHECK(rule_of("1.1.1.1") == R::None);
  CHECK(rule_of("2606:4700::1111") == R::None);
  CHECK(rule_of("127.0.0.1") == R::Loopback);
  CHECK(rule_of("127.255.255.254") == R::Loopback);
  CHECK(rule_of("::1") == R::Loopback);
  for (const char* p : {"10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255", "192.168.1.1", "fc00::1",
                        "fd12:3456::1", "fec0::1", "64:ff9b:1::1"})
    CHECK_MESSAGE(rule_of(p) == R::Private, p);
  CHECK(rule_of("172.15.255.255") == R::None);
  CHECK(rule_of("172.32.0.0") == R::None);
  CHECK(rule_of("169.254.0.1") == R::LinkLocal);
  CHECK(rule_of("fe80::1") == R::LinkLocal);
  CHECK(rule_of("febf::1") == R::LinkLocal);
  for (const char* m : {"169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"})
    CHECK_MESSAGE(rule_of(m) == R::CloudMetadata, m);
  CHECK(rule_of("fd00:ec2::253") == R::Private);
  CHECK(rule_of("0.0.0.0") == R::Unspecified);
  CHECK(rule_of("::") == R::Unspecified);
  CHECK(rule_of("0.1.2.3") == R::ThisNetwork);
  CHECK(rule_of("100.64.0.1") == R::Shared);
  CHECK(rule_of("100.127.255.255") == R::Shared);
  CHECK(rule_of("100.128.0.0") == R::None);
  CHECK(rule_of("224.0.0.1") == R::Multicast);
  CHECK(rule_of("239.255.255.250") == R::Multicast);
  CHECK(rule_of("ff02::1") == R::Multicast);
  CHECK(rule_of("255.255.255.255") == R::Broadcast);
  for (const char* r : {"192.0.0.8", "192.0.2.1", "198.51.100.1", "203.0.113.1", "198.18.0.1", "198.19.255.255",
                        "240.0.0.1", "192.88.99.1", "2001:db8::1", "2001::1", "100::1", "3fff::1", "5f00::1",
                        "1234::1", "e000::1"})
    CHECK_MESSAGE(rule_of(r) == R::Reserved, r);
  // IPv6 forms that reach an IPv4 address are that address's.
  CHECK(rule_of("::ffff:127.0.0.1") == R::Loopback);
  CHECK(rule_of("::ffff:7f00:1") == R::Loopback);
  CHECK(rule_of("::ffff:10.0.0.1") == R::Private);
  CHECK(rule_of("::ffff:169.254.169.254") == R::CloudMetadata);
  CHECK(rule_of("::ffff:0.0.0.0") == R::Unspecified);
  CHECK(rule_of("::ffff:8.8.8.8") == R::None);
  CHECK(rule_of("::127.0.0.1") == R::Loopback);   // IPv4-compatible
  CHECK(rule_of("::10.0.0.1") == R::Private);
  CHECK(rule_of("::8.8.8.8") == R::Reserved);     // deprecated: goes nowhere useful
  CHECK(rule_of("::ffff:0:10.0.0.1") == R::Private);  // IPv4-translated
  CHECK(rule_of("64:ff9b::127.0.0.1") == R::Loopback);  // NAT64
  CHECK(rule_of("64:ff9b::a9fe:a9fe") == R::CloudMetadata);
  CHECK(rule_of("64:ff9b::8.8.8.8") == R::None);
  CHECK(rule_of("2002:a00:1::1") == R::Private);   // 6to4 of 10.0.0.1
  CHECK(rule_of("2002:808:808::1") == R::None);
}

TEST_CASE("address policy: names") {
  for (const char* m : {"metadata.google.internal", "METADATA.google.internal.", "metadata", "metadata.goog",
                        "instance-data", "instance-data.ec2.internal", "metadata.azure.internal"})
    CHECK_MESSAGE(classify_host(m) == AddressRule::CloudMetadata, m);
  // Other names are decided by what they resolve to.
  CHECK(classify_host("localhost") == AddressRule::None);
  CHECK(classify_host("idp.example.com") == AddressRule::None);
  CHECK(classify_host("metadata.google.internal.evil.example") == AddressRule::None);
  CHECK(classify_host("0x7f.1") == AddressRule::Loopback);
  CHECK(classify_host("[::ffff:169.254.169.254]") == AddressRule::CloudMetadata);

  for (const char* l : {"localhost", "LocalHost.", "127.0.0.1", "127.1", "::1", "[::1]", "::ffff:127.0.0.1", "0x7f.1",
                        "2130706433", "127.9.9.9", "localhost:8080", "[::1]:80", "127.0.0.1:1", "[::ffff:127.0.0.1]:9"})
    CHECK_MESSAGE(is_loopback_host(l), l);
  for (const char* n : {"127.evil.example", "localhost.evil.example", "10.0.0.1", "0.0.0.0", "::", "example.com", "",
                        "evil.example:127", "[::2]:80"})
    CHECK_MESSAGE(!is_loopback_host(n), n);
}

TEST_CASE("address policy: refusals name the host, the address and the rule") {
  AddressPolicy strict;
  AddressPolicy loopback{true};
  auto r = check_host(strict, "169.254.169.254");
  REQUIRE(r);
  CHECK(r->rule == AddressRule::CloudMetadata);
  CHECK(r->message ==
        "169.254.169.254 is a cloud metadata service (169.254.169.254, 169.254.170.2, 100.100.100.200, fd00:ec2::254) "
        "(rule cloud-metadata)");
  r = check_host(strict, "012.1");
  REQUIRE(r);
  CHECK(r->message.rfind("012.1 (10.0.0.1) is a private address (10.0.0.0/8,", 0) == 0);
  CHECK(r->message.find("(rule private)") != std::string::npos);
  r = check_host(strict, "::ffff:127.0.0.1");
  REQUIRE(r);
  CHECK(r->message == "::ffff:127.0.0.1 is a loopback address (127.0.0.0/8, ::1) (rule loopback), allowed only for an "
                      "upstream on loopback");
  r = check_host(strict, "0177.0.0.1");
  REQUIRE(r);
  CHECK(r->message.rfind("0177.0.0.1 (127.0.0.1) is a loopback address", 0) == 0);
  r = check_host(strict, "metadata.google.internal");
  REQUIRE(r);
  CHECK(r->message.rfind("metadata.google.internal is the name of a cloud metadata service", 0) == 0);

  // Loopback, when allowed, in any spelling; nothing else is.
  CHECK_FALSE(check_host(loopback, "::ffff:127.0.0.1"));
  CHECK_FALSE(check_host(loopback, "0x7f.1"));
  CHECK(check_host(loopback, "10.0.0.1"));
  CHECK(check_host(loopback, "[::]"));
  CHECK(check_host(loopback, "0"));
  CHECK_FALSE(check_host(strict, "8.8.8.8"));
  CHECK_FALSE(check_host(strict, "idp.example.com"));
  CHECK_FALSE(check_host(strict, "localhost"));  // decided by what it resolves to

  auto resolved = check_resolved(strict, "localhost", IpAddress::v4(0x7f000001));
  REQUIRE(resolved);
  CHECK(resolved->rule == AddressRule::Loopback);
  CHECK(resolved->message.rfind("localhost resolves to 127.0.0.1, a loopback address (127.0.0.0/8, ::1) (rule loopback)",
                                0) == 0);
  CHECK_FALSE(check_resolved(loopback, "localhost", IpAddress::v4(0x7f000001)));
  CHECK(check_resolved(loopback, "rebound.example", IpAddress::v4(0xa9fea9fe))->rule == AddressRule::CloudMetadata);
  CHECK_FALSE(check_resolved(strict, "idp.example.com", IpAddress::v4(0x5db8d822)));

  for (int i = 0; i <= static_cast<int>(AddressRule::Reserved); ++i) {
    auto rule = static_cast<AddressRule>(i);
    CHECK(rule_name(rule) != "?");
    CHECK(rule_text(rule) != "?");
  }
}

namespace {

/// A listening socket on 127.0.0.1 that answers each connection it accepts
/// with 204, and tells how many it accepted.
struct LoopbackServer {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  LoopbackServer() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 8) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~LoopbackServer() { ::close(fd); }
  /// Whether a connection is waiting, without waiting for one.
  bool pending() const {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
  /// Accepts one connection, reads its request's head and answers 204.
  void answer_one() const {
    int c = ::accept(fd, nullptr, nullptr);
    REQUIRE(c >= 0);
    std::string got;
    char buf[1024];
    while (got.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
    }
    const char reply[] = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";
    CHECK(::write(c, reply, sizeof reply - 1) == static_cast<ssize_t>(sizeof reply - 1));
    ::close(c);
  }
};

HttpResult fetch_once(Io& io, const std::string& url, std::optional<AddressPolicy> guard) {
  auto u = Url::parse(url);
  REQUIRE(u);
  auto client = HttpClient::create(io, *u, TlsOptions{}, guard);
  REQUIRE(client);
  auto strand = asio::make_strand(io.executor());
  auto run = [](std::shared_ptr<HttpClient> c, asio::any_io_executor ex) -> Task<HttpResult> {
    auto abort = Abort::start(ex, Abort::Clock::now() + std::chrono::seconds(30), nullptr);
    HttpRequest req{"GET", {}, {}, {}};
    auto r = co_await c->exchange(req, *abort, [](const HttpHead&) { return true; }, [](std::string_view) { return true; });
    abort->disarm();
    co_return r;
  };
  return block_on(strand, run(*client, strand), []() -> HttpResult { return {"the loop stopped", HttpError::Aborted, {}}; });
}

}  // namespace

TEST_CASE("address policy: a guarded HTTP client checks the host and what it resolves to before connecting") {
  Io io(1);
  LoopbackServer server;
  const std::string port = std::to_string(server.port);

  // A literal is refused before it is looked up or connected to.
  auto r = fetch_once(io, "http://[::ffff:127.0.0.1]:" + port + "/", AddressPolicy{});
  CHECK(r.kind == HttpError::Refused);
  CHECK(r.error == "refused before connecting: ::ffff:127.0.0.1 is a loopback address (127.0.0.0/8, ::1) (rule "
                   "loopback), allowed only for an upstream on loopback");
  r = fetch_once(io, "http://0x7f.1:" + port + "/", AddressPolicy{});
  CHECK(r.kind == HttpError::Refused);
  CHECK(r.error.find("0x7f.1 (127.0.0.1) is a loopback address") != std::string::npos);
  // A name is checked in every address it resolves to.
  r = fetch_once(io, "http://localhost:" + port + "/", AddressPolicy{});
  CHECK(r.kind == HttpError::Refused);
  CHECK(r.error.rfind("refused before connecting: localhost resolves to ", 0) == 0);
  CHECK(r.error.find("(rule loopback)") != std::string::npos);
  CHECK_FALSE(server.pending());

  // Allowed: the very address checked is connected to.
  std::thread answer([&server] { server.answer_one(); });
  r = fetch_once(io, "http://localhost:" + port + "/", AddressPolicy{true});
  answer.join();
  CHECK(r.error == "");
  CHECK(r.head.status == 204);
  // Without a guard (URLs the operator gave) nothing is checked.
  std::thread again([&server] { server.answer_one(); });
  r = fetch_once(io, "http://127.1:" + port + "/", std::nullopt);
  again.join();
  CHECK(r.head.status == 204);
  io.stop();
}
