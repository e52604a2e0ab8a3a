// Deadlines on their loop's one timer: each fires once, on its own
// executor, in order, unless disarmed or re-armed; and a loop's deadlines
// are safe from its threads at once.
#include <doctest/doctest.h>

#include <boost/asio/post.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <vector>

#include "loop.hpp"
#include "util/deadline.hpp"

using namespace mcpgw;
using namespace std::chrono_literals;

namespace {

using Clock = Deadline::Clock;

/// Runs `f` on `ex` and waits for it.
template <class F>
void on(const asio::any_io_executor& ex, F f) {
  std::promise<void> done;
  asio::post(ex, [&] {
    f();
    done.set_value();
  });
  done.get_future().get();
}

}  // namespace

TEST_CASE("deadline: fires once, at its time, on its own executor") {
  testing::Loop loop(2);
  auto strand = loop.strand();
  std::promise<bool> fired;
  auto d = std::make_unique<Deadline>(strand);
  const auto at = Clock::now() + 30ms;
  on(strand, [&] {
    d->arm(at, [&] { fired.set_value(strand.target<asio::strand<asio::io_context::executor_type>>()->running_in_this_thread() && Clock::now() >= at); });
  });
  CHECK(fired.get_future().get());
  on(strand, [&] { d.reset(); });
}

TEST_CASE("deadline: a disarmed or re-armed deadline does not fire what it had") {
  testing::Loop loop(1);
  auto ex = loop.executor();
  std::atomic<int> first{0}, second{0};
  std::promise<void> later;
  Deadline a(ex), b(ex), c(ex);
  on(ex, [&] {
    a.arm(Clock::now() + 10ms, [&] { ++first; });
    a.disarm();
    b.arm(Clock::now() + 10ms, [&] { ++first; });
    b.arm(Clock::now() + 20ms, [&] { ++second; });  // replaces the first
    c.arm(Clock::now() + 40ms, [&] { later.set_value(); });
  });
  later.get_future().get();
  CHECK(first.load() == 0);
  CHECK(second.load() == 1);
}

TEST_CASE("deadline: a sooner deadline armed after later ones fires first; all fire in order") {
  testing::Loop loop(1);
  auto ex = loop.executor();
  std::vector<int> order;
  std::promise<void> all;
  std::vector<std::unique_ptr<Deadline>> ds;
  for (int i = 0; i < 5; ++i) ds.push_back(std::make_unique<Deadline>(ex));
  const auto now = Clock::now();
  // Armed latest first: each one is sooner than every deadline armed before.
  on(ex, [&] {
    for (int i = 4; i >= 0; --i)
      ds[i]->arm(now + std::chrono::milliseconds(10 * (i + 1)), [&, i] {
        order.push_back(i);
        if (order.size() == 5) all.set_value();
      });
  });
  all.get_future().get();
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
}

TEST_CASE("deadline: a deadline destroyed armed never fires; one may re-arm itself from its fire") {
  testing::Loop loop(1);
  auto ex = loop.executor();
  std::atomic<bool> destroyed_fired{false};
  std::promise<int> rearmed;
  auto gone = std::make_unique<Deadline>(ex);
  Deadline again(ex);
  int fires = 0;
  std::function<void()> fire = [&] {
    if (++fires < 3) again.arm(Clock::now() + 5ms, fire);
    else rearmed.set_value(fires);
  };
  on(ex, [&] {
    gone->arm(Clock::now() + 5ms, [&] { destroyed_fired = true; });
    gone.reset();
    again.arm(Clock::now() + 5ms, fire);
  });
  CHECK(rearmed.get_future().get() == 3);
  CHECK_FALSE(destroyed_fired.load());
}

TEST_CASE("deadline: many strands of a loop that two threads run arm, disarm and fire at once") {
  testing::Loop loop(2);
  constexpr int kStrands = 64, kRounds = 50;
  std::atomic<int> fired{0}, finished{0};
  std::promise<void> all;
  std::vector<std::shared_ptr<Deadline>> keep;
  std::mutex keep_mu;
  for (int s = 0; s < kStrands; ++s) {
    auto strand = loop.strand();
    asio::post(strand, [&, strand] {
      auto d = std::make_shared<Deadline>(strand);
      {
        std::lock_guard lk(keep_mu);
        keep.push_back(d);
      }
      // Armed and disarmed again and again (a call's deadline met), then
      // left to fire.
      for (int r = 0; r < kRounds; ++r) {
        d->arm(Clock::now() + 1h, [&] { ++fired; });
        d->disarm();
      }
      d->arm(Clock::now() + 5ms, [&] {
        ++fired;
        if (++finished == kStrands) all.set_value();
      });
    });
  }
  all.get_future().get();
  CHECK(fired.load() == kStrands);
  for (auto& d : keep) on(d->executor(), [&] { d.reset(); });
}
