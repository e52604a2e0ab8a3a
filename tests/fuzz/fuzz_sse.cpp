// libFuzzer target: the incremental SSE parser (gateway/transport/sse.*)
// that reads upstream answers and streams. The first byte of an input picks
// the chunking (a seed for the piece sizes) and, in its top bits, the event
// size limit; the rest is the stream. Besides sanitizer reports, a crash is
// any broken property: chunking changing what is parsed (events, skipped
// oversized events, last id, retry), an event over the limit delivered, a
// line end inside an event type, a callback returning false not stopping
// the parser at once.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_common.hpp"
#include "transport/sse.hpp"

using namespace mcpgw;

namespace {

struct Parsed {
  std::vector<std::pair<std::string, std::string>> events;
  std::vector<std::size_t> oversized;
  std::string last_id;
  int retry = -1;
  bool stopped = false;
  bool operator==(const Parsed&) const = default;
};

/// Parses `stream` in pieces of pseudo-random sizes from `seed` (0 = whole);
/// the callback says stop after `stop_after` events.
Parsed parse(std::string_view stream, unsigned seed, std::size_t limit, std::size_t stop_after = SIZE_MAX) {
  Parsed out;
  transport::sse::Parser p(
      [&](std::string_view ev, std::string_view data) {
        MCPGW_FUZZ_CHECK(ev.find_first_of("\r\n") == std::string_view::npos, "line end in an event type");
        MCPGW_FUZZ_CHECK(data.find('\r') == std::string_view::npos, "CR in event data");
        MCPGW_FUZZ_CHECK(data.size() <= limit, "event over the limit delivered");
        MCPGW_FUZZ_CHECK(!out.stopped, "an event after the callback said stop");
        out.events.emplace_back(std::string(ev), std::string(data));
        return out.events.size() < stop_after;
      },
      limit,
      [&](std::size_t bytes) {
        MCPGW_FUZZ_CHECK(bytes > limit, "an event within the limit reported as oversized");
        out.oversized.push_back(bytes);
        return true;
      });
  std::uint32_t state = seed;
  while (!stream.empty()) {
    std::size_t n = stream.size();
    if (seed) {
      state = state * 1103515245u + 12345u;
      n = std::min<std::size_t>(n, (state >> 16) % 9);
    }
    if (!p.feed(stream.substr(0, n))) {
      out.stopped = true;
      break;
    }
    stream.remove_prefix(n);
  }
  out.last_id = p.last_event_id();
  out.retry = p.retry_ms();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned mode = data[0];
  std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t limit = (mode >> 5) == 0 ? 1 << 20 : std::size_t{1} << (mode >> 5);  // 2..128 bytes, or 1 MiB
  Parsed whole = parse(stream, 0, limit);
  // Any chunking, even one byte at a time, parses the same.
  Parsed chunked = parse(stream, (mode & 0x1f) + 1, limit);
  MCPGW_FUZZ_CHECK(chunked.events == whole.events, "chunking changed the events");
  MCPGW_FUZZ_CHECK(chunked.oversized.size() == whole.oversized.size(), "chunking changed the oversized events");
  MCPGW_FUZZ_CHECK(chunked.last_id == whole.last_id && chunked.retry == whole.retry, "chunking changed id or retry");
  // Stopping after the first event gives exactly that event.
  if (!whole.events.empty()) {
    Parsed first = parse(stream, (mode & 0x1f) + 1, limit, 1);
    MCPGW_FUZZ_CHECK(first.stopped && first.events.size() == 1 && first.events[0] == whole.events[0],
                     "a callback returning false did not stop the parser at once");
  }
  return 0;
}
