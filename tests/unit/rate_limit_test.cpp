#include "auth/rate_limit.hpp"

#include <doctest/doctest.h>

using mcpgw::auth::RateLimiter;
using namespace std::chrono_literals;

TEST_CASE("rate limit: a burst, then one call per 1/rate, per principal") {
  RateLimiter r(2, 3);
  auto t = RateLimiter::Clock::now();
  CHECK_FALSE(r.take("a", t));
  CHECK_FALSE(r.take("a", t));
  CHECK_FALSE(r.take("a", t));
  auto wait = r.take("a", t);
  REQUIRE(wait);
  CHECK(*wait == 500);
  CHECK_FALSE(r.take("b", t));  // b has its own bucket
  CHECK(r.take("a", t + 250ms).value() == 250);
  CHECK_FALSE(r.take("a", t + 500ms));
}

TEST_CASE("rate limit: burst 0 means one second's worth; rate 0 means none") {
  RateLimiter r(5, 0);
  CHECK(r.capacity() == 5);
  RateLimiter off(0, 0);
  auto t = RateLimiter::Clock::now();
  for (int i = 0; i < 100; ++i) CHECK_FALSE(off.take("a", t));
}
