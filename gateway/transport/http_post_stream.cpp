#include "transport/http_post_stream.hpp"

namespace mcpgw::transport {

using Clock = std::chrono::steady_clock;

http::awaitable<Answer> wait_first(PostStream& s, bool accept_json, bool accept_sse,
                                   std::optional<std::chrono::milliseconds> stream_after) {
  auto deadline = stream_after && accept_sse ? Clock::now() + *stream_after : Clock::time_point::max();
  for (;;) {
    bool ready, related;
    {
      std::lock_guard lk(s.mu);
      related = s.seen_related;
      ready = s.finals_seen == s.finals_expected || (related && accept_sse);
    }
    if (ready) co_return accept_json && !related ? Answer::Json : Answer::Stream;
    auto now = Clock::now();
    if (now >= deadline) co_return Answer::Stream;
    co_await s.signal->wait(deadline == Clock::time_point::max() ? Clock::duration(std::chrono::hours(1))
                                                                   : deadline - now);
  }
}

}  // namespace mcpgw::transport
