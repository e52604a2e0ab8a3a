// Unit tests of the observability and resilience pieces: trace context,
// audit line format and digest, circuit breaker, concurrency limiter.
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "loop.hpp"
#include "mcp/trace.hpp"
#include "server/audit.hpp"
#include "upstream/breaker.hpp"
#include "upstream/limiter.hpp"

using namespace mcpgw;
using namespace std::chrono_literals;

TEST_CASE("trace: traceparent parsing and children") {
  auto t = mcp::TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  REQUIRE(t);
  CHECK(t->trace_id == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(t->span_id == "00f067aa0ba902b7");
  CHECK(t->flags == "01");
  auto c = t->child();
  CHECK(c.trace_id == t->trace_id);
  CHECK(c.span_id != t->span_id);
  CHECK(c.span_id.size() == 16);
  CHECK(mcp::TraceContext::parse(c.header()));
  // A later version may append fields; version ff, all-zero ids, upper
  // case and wrong lengths are invalid.
  CHECK(mcp::TraceContext::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"));
  CHECK_FALSE(mcp::TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"));
  CHECK_FALSE(mcp::TraceContext::parse("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
  CHECK_FALSE(mcp::TraceContext::parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01"));
  CHECK_FALSE(mcp::TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"));
  CHECK_FALSE(mcp::TraceContext::parse("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"));
  CHECK_FALSE(mcp::TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01"));
  CHECK_FALSE(mcp::TraceContext::parse(""));
  CHECK_FALSE(mcp::TraceContext::parse(std::string(10000, 'a')));
  auto f = mcp::TraceContext::fresh();
  CHECK(mcp::TraceContext::parse(f.header()));
}

TEST_CASE("audit: line format and canonical digest") {
  auto args = json::parse(R"({"b":[1,{"y":2,"x":1}],"a":"é"})");
  auto same = json::parse(R"({"a":"é","b":[1,{"x":1,"y":2}]})");
  REQUIRE(args);
  REQUIRE(same);
  CHECK(server::canonical_digest(*args) == server::canonical_digest(*same));
  CHECK(server::canonical_digest(*args).rfind("sha256:", 0) == 0);
  CHECK(server::canonical_digest(*args).size() == 7 + 64);
  // sha256 of the text {} is well known.
  CHECK(server::canonical_digest(*json::parse("{}")) ==
        "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");

  server::AuditRecord r;
  r.event = "call";
  r.principal = "ci";
  r.tool = "toolbox:echo";
  r.server = "toolbox";
  r.upstream_tool = "echo";
  r.arguments = &*args;
  r.outcome = "ok";
  r.ms = 1.26;
  r.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  const double t = 1700000000123.0;
  CHECK(server::Audit::format(r, config::Audit::Arguments::Digest, t) ==
        R"({"time":"2023-11-14T22:13:20.123Z","event":"call","principal":"ci","tool":"toolbox:echo","server":"toolbox",)"
        R"("upstream_tool":"echo","arguments_digest":")" + server::canonical_digest(*args) +
            R"(","outcome":"ok","ms":1.3,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"})");
  CHECK(server::Audit::format(r, config::Audit::Arguments::Full, t).find(R"("arguments":{"b":[1,{"y":2,"x":1}],"a":"é"})") !=
        std::string::npos);
  std::string none = server::Audit::format(r, config::Audit::Arguments::None, t);
  CHECK(none.find("arguments") == std::string::npos);
  // Hostile text stays one valid JSON line.
  r.reason = "bad\n\"token\"\x01";
  auto line = server::Audit::format(r, config::Audit::Arguments::None, t);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(json::parse(line));
}

TEST_CASE("breaker: opens after N failures, one probe after open_ms, closes on success") {
  auto now = upstream::Breaker::Clock::now();
  upstream::Breaker b(config::Circuit{2, 50}, [&now] { return now; });
  std::string why;
  auto t1 = b.admit(why);
  REQUIRE(t1);
  CHECK_FALSE(b.record(*t1, false));
  auto t2 = b.admit(why);
  REQUIRE(t2);
  CHECK(b.record(*t2, false) == upstream::Breaker::State::Open);
  CHECK(b.state() == upstream::Breaker::State::Open);
  CHECK_FALSE(b.admit(why));
  CHECK(why.find("circuit open after 2 consecutive failures") == 0);
  now += 60ms;
  CHECK(b.state() == upstream::Breaker::State::HalfOpen);
  auto probe = b.admit(why);
  REQUIRE(probe);
  CHECK(probe->probe);
  CHECK_FALSE(b.admit(why));  // one probe at a time
  CHECK(why.find("a probe call is in flight") != std::string::npos);
  CHECK(b.record(*probe, false) == upstream::Breaker::State::Open);
  now += 60ms;
  auto probe2 = b.admit(why);
  REQUIRE(probe2);
  CHECK(b.record(*probe2, true) == upstream::Breaker::State::Closed);
  CHECK(b.admit(why));

  upstream::Breaker off(config::Circuit{0, 50});
  for (int i = 0; i < 10; ++i) {
    auto t = off.admit(why);
    REQUIRE(t);
    CHECK_FALSE(off.record(*t, false));
  }
}

TEST_CASE("limiter: at most N at once, first come first served, bounded by the deadline and cancel") {
  testing::Loop loop;
  upstream::Limiter l(2);
  auto in = [](std::chrono::milliseconds d) { return std::chrono::steady_clock::now() + d; };
  auto a = loop.run(l.acquire(in(1s), nullptr));
  auto b = loop.run(l.acquire(in(1s), nullptr));
  REQUIRE(a);
  REQUIRE(b);
  CHECK(l.in_flight() == 2);
  auto late = loop.run(l.acquire(in(30ms), nullptr));
  REQUIRE_FALSE(late);
  CHECK(late.error() == "timed out waiting for a free call slot (max_concurrency 2)");
  CancelSignal cancel;
  std::thread canceller([&] {
    while (l.waiting() == 0) std::this_thread::yield();
    cancel.cancel();
  });
  auto cancelled = loop.run(l.acquire(in(10s), &cancel));
  canceller.join();
  REQUIRE_FALSE(cancelled);
  CHECK(cancelled.error() == "cancelled while waiting for a free call slot");

  // A waiter gets the slot a finished call gives back, without polling.
  std::thread releaser([&] {
    while (l.waiting() == 0) std::this_thread::yield();
    upstream::Limiter::Slot gone(std::move(*a));
  });
  auto c = loop.run(l.acquire(in(10s), nullptr));
  releaser.join();
  REQUIRE(c);
  CHECK(l.in_flight() == 2);

  upstream::Limiter unlimited(0);
  std::vector<upstream::Limiter::Slot> many;
  for (int i = 0; i < 100; ++i) {
    auto s = loop.run(unlimited.acquire(std::chrono::steady_clock::now(), nullptr));
    REQUIRE(s);
    many.push_back(std::move(*s));
  }
}

TEST_CASE("limiter: a long line is served in order, skipping waiters that gave up, one wake-up per turn") {
  testing::Loop loop;
  upstream::Limiter l(1);
  auto held = loop.run(l.acquire(std::chrono::steady_clock::now() + 10s, nullptr));
  REQUIRE(held);
  constexpr int kWaiters = 300;
  std::mutex mu;
  std::vector<int> served;
  int finished = 0;
  std::condition_variable all_done;
  std::vector<std::unique_ptr<CancelSignal>> give_up;
  for (int i = 0; i < kWaiters; ++i) {
    // Every third waiter gives up before its turn comes.
    CancelSignal* cancel = i % 3 == 1 ? give_up.emplace_back(std::make_unique<CancelSignal>()).get() : nullptr;
    auto wait_turn = [&l, &mu, &served, &finished, &all_done, i, cancel]() -> Task<> {
      auto slot = co_await l.acquire(std::chrono::steady_clock::now() + 30s, cancel);
      {
        std::lock_guard lk(mu);
        if (slot) served.push_back(i);
      }
      // The slot is given back before the waiter counts as finished, so the
      // check of in_flight() below cannot see the last one still held.
      if (slot) upstream::Limiter::Slot done(std::move(*slot));
      std::lock_guard lk(mu);
      if (++finished == kWaiters) all_done.notify_all();
    };
    asio::co_spawn(loop.strand(), std::move(wait_turn), asio::detached);
    // Tickets follow the order the waiters reach the limiter.
    while (l.waiting() != i + 1) std::this_thread::yield();
  }
  for (auto& c : give_up) c->cancel();
  while (l.waiting() != kWaiters - kWaiters / 3) std::this_thread::yield();
  { upstream::Limiter::Slot gone(std::move(*held)); }
  std::unique_lock lk(mu);
  REQUIRE(all_done.wait_for(lk, 20s, [&] { return finished == kWaiters; }));
  REQUIRE(served.size() == static_cast<std::size_t>(kWaiters - kWaiters / 3));
  for (std::size_t k = 0; k < served.size(); ++k) CHECK(served[k] == static_cast<int>(k / 2 * 3 + (k % 2 ? 2 : 0)));
  CHECK(l.in_flight() == 0);
}

TEST_CASE("audit: lines that cannot be written are counted as dropped") {
  for (const char* path : {"/dev/full", "/nonexistent-dir/audit.jsonl"}) {
    INFO(path);
    server::Metrics metrics;
    {
      server::Audit audit(config::Audit{path, config::Audit::Arguments::Digest}, metrics);
      CHECK(audit.enabled());
      server::AuditRecord r;
      r.event = "call";
      r.tool = "t";
      r.outcome = "ok";
      for (int i = 0; i < 5; ++i) audit.record(r);
    }  // the writer drains its queue before it stops
    CHECK(metrics.render().find("mcpgw_audit_dropped_total 5") != std::string::npos);
  }
  server::Metrics metrics;
  server::Audit off(config::Audit{}, metrics);
  CHECK_FALSE(off.enabled());
  server::AuditRecord r;
  off.record(r);
  CHECK(metrics.render().find("mcpgw_audit_dropped_total 0") != std::string::npos);
}
