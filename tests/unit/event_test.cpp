// The coroutine wake-up primitive (the gateway's one) and the crossings between the loop and
// blocking threads.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "loop.hpp"
#include "util/event.hpp"
#include "util/offload.hpp"

using namespace mcpgw;
using namespace std::chrono_literals;

namespace {

auto in(std::chrono::milliseconds d) { return std::chrono::steady_clock::now() + d; }

}  // namespace

TEST_CASE("event: a notify between reading the generation and waiting is not lost") {
  testing::Loop loop;
  Event e;
  auto seen = e.generation();
  e.notify();
  CHECK(loop.run(e.wait(seen, in(10s))));
}

TEST_CASE("event: a wait ends at its deadline, and by cancel") {
  testing::Loop loop;
  Event e;
  CHECK_FALSE(loop.run(e.wait(e.generation(), in(20ms))));
  CancelSignal cancel;
  cancel.cancel();
  CHECK(loop.run(e.wait(e.generation(), in(10s), &cancel)));
  CancelSignal later;
  std::thread t([&] { later.cancel(); });
  CHECK(loop.run(e.wait(e.generation(), std::chrono::steady_clock::time_point::max(), &later)));
  t.join();
}

TEST_CASE("event: one notify wakes every waiter, from any thread") {
  testing::Loop loop(2);
  Event e;
  std::atomic<int> woken{0}, waiting{0};
  constexpr int kWaiters = 200;
  auto seen = e.generation();
  std::vector<std::future<void>> done;
  for (int i = 0; i < kWaiters; ++i)
    done.push_back(asio::co_spawn(
        loop.strand(),
        [&]() -> Task<> {
          ++waiting;
          if (co_await e.wait(seen, std::chrono::steady_clock::time_point::max())) ++woken;
        },
        asio::use_future));
  while (waiting.load() < kWaiters) std::this_thread::yield();
  std::thread notifier([&] { e.notify(); });
  for (auto& f : done) f.get();
  notifier.join();
  CHECK(woken.load() == kWaiters);
}

namespace {

/// Whether a waiter on `strand` had been resumed when a notify() made on
/// that same strand returned.
bool resumed_within_notify(Resume resume) {
  testing::Loop loop(1);
  auto strand = loop.strand();
  Event e(resume);
  std::atomic<bool> waiting{false}, resumed{false};
  auto seen = e.generation();
  auto waiter = asio::co_spawn(
      strand,
      [&]() -> Task<> {
        waiting = true;
        co_await e.wait(seen, std::chrono::steady_clock::time_point::max());
        resumed = true;
      },
      asio::use_future);
  while (!waiting.load()) std::this_thread::yield();
  // The waiter's frame is suspended once its strand runs something else.
  std::promise<bool> within;
  asio::post(strand, [&] {
    e.notify();
    within.set_value(resumed.load());
  });
  bool inside = within.get_future().get();
  waiter.get();
  return inside;
}

}  // namespace

TEST_CASE("event: Resume::Inline resumes a waiter inside a notify on its own strand; Posted never does") {
  CHECK(resumed_within_notify(Resume::Inline));
  CHECK_FALSE(resumed_within_notify(Resume::Posted));
}

TEST_CASE("offload: blocking work runs on a pool thread and its result resumes the coroutine") {
  testing::Loop loop;
  WorkerPool pool(0, 2);
  auto caller = std::this_thread::get_id();
  auto ran_on = loop.run(offload(
      pool, [] { return std::this_thread::get_id(); }, [] { return std::thread::id(); }));
  CHECK(ran_on != caller);
  CHECK(ran_on != std::thread::id());
}
