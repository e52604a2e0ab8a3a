#include <doctest/doctest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "transport/sse.hpp"

using namespace mcpgw;

namespace {

/// What a parser made of a stream: each event, skipped sizes, and the
/// stream's last id and retry.
struct Parsed {
  std::vector<std::pair<std::string, std::string>> events;
  std::vector<std::size_t> oversized;
  std::string last_id;
  int retry = -1;
  bool operator==(const Parsed&) const = default;
};

/// Feeds `stream` in the pieces `cuts` gives (offsets where a piece ends).
Parsed parse(std::string_view stream, const std::vector<std::size_t>& cuts, std::size_t max_event = 1 << 20) {
  Parsed out;
  transport::sse::Parser p(
      [&](std::string_view ev, std::string_view data) {
        out.events.emplace_back(std::string(ev), std::string(data));
        return true;
      },
      max_event,
      [&](std::size_t bytes) {
        out.oversized.push_back(bytes);
        return true;
      });
  std::size_t at = 0;
  for (std::size_t cut : cuts) {
    REQUIRE(p.feed(stream.substr(at, cut - at)));
    at = cut;
  }
  REQUIRE(p.feed(stream.substr(at)));
  out.last_id = p.last_event_id();
  out.retry = p.retry_ms();
  return out;
}

const std::string kStream =
    "\xEF\xBB\xBF: comment\r\n"
    "retry: 250\n"
    "id: 1\r\n"
    "data\n"
    "\n"
    "event: message\r"
    "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n"
    "\r\n"
    "id: 2\n"
    "data: line one\n"
    "data:line two\n"
    "data: \n"
    "unknown: field\n"
    "\n"
    ": only a comment\n\n"
    "event: custom\n"
    "data: tail\r\r"
    "id\n\n";

}  // namespace

TEST_CASE("sse: the same events whether the stream comes whole, byte by byte or in random chunks") {
  Parsed whole = parse(kStream, {});
  REQUIRE(whole.events.size() == 4);
  CHECK(whole.events[0] == std::pair<std::string, std::string>{"message", ""});
  CHECK(whole.events[1] == std::pair<std::string, std::string>{"message", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"});
  CHECK(whole.events[2] == std::pair<std::string, std::string>{"message", "line one\nline two\n"});
  CHECK(whole.events[3] == std::pair<std::string, std::string>{"custom", "tail"});
  CHECK(whole.last_id == "");
  CHECK(whole.retry == 250);

  std::vector<std::size_t> every_byte;
  for (std::size_t i = 1; i < kStream.size(); ++i) every_byte.push_back(i);
  CHECK(parse(kStream, every_byte) == whole);

  std::mt19937 rng(12345);
  for (int round = 0; round < 500; ++round) {
    std::vector<std::size_t> cuts;
    std::size_t at = 0;
    for (;;) {
      at += std::uniform_int_distribution<std::size_t>(0, 12)(rng);
      if (at >= kStream.size()) break;
      cuts.push_back(at);
    }
    CHECK(parse(kStream, cuts) == whole);
  }
}

TEST_CASE("sse: an event over the limit is skipped and reported, whatever the chunking; the next one arrives") {
  std::string big(100, 'x');
  std::string stream = "data: small\n\ndata: " + big + "\ndata: more\n\nid: 7\ndata: after\n\n";
  Parsed whole = parse(stream, {}, 50);
  REQUIRE(whole.events.size() == 2);
  CHECK(whole.events[0].second == "small");
  CHECK(whole.events[1].second == "after");
  REQUIRE(whole.oversized.size() == 1);
  CHECK(whole.oversized[0] > 50);
  CHECK(whole.last_id == "7");
  std::vector<std::size_t> every_byte;
  for (std::size_t i = 1; i < stream.size(); ++i) every_byte.push_back(i);
  Parsed bytewise = parse(stream, every_byte, 50);
  CHECK(bytewise.events == whole.events);
  CHECK(bytewise.oversized.size() == 1);
}

TEST_CASE("sse: restart drops a broken-off event but keeps the last id") {
  std::vector<std::string> got;
  transport::sse::Parser p([&](std::string_view, std::string_view data) {
    got.emplace_back(data);
    return true;
  });
  CHECK(p.feed("id: 4\ndata: whole\n\ndata: cut in the mid"));
  p.restart();
  CHECK(p.feed("data: resumed\n\n"));
  CHECK(got == std::vector<std::string>{"whole", "resumed"});
  CHECK(p.last_event_id() == "4");
}
