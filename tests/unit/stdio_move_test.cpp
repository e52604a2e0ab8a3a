#include <doctest/doctest.h>
#include <signal.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "transport/stdio_connection.hpp"

using namespace mcpgw;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

/// A line server: sed answers each request with an empty result under its
/// id and sends notifications back as they came.
transport::ChildSpec sed_server() {
  return {"sed", {"-u", "-E", R"(s/^\{"jsonrpc":"2.0","id":([0-9]+),.*$/{"jsonrpc":"2.0","id":\1,"result":{}}/)"}, {}, ""};
}

/// A ping made on worker `w`'s thread (where a client's call would be
/// made), after notification `note` when it is set; true once answered.
std::future<bool> ping_from(transport::Io& io, transport::StdioConnection& c, int w, std::string note = "") {
  auto promise = std::make_shared<std::promise<bool>>();
  auto answer = promise->get_future();
  asio::post(io.worker(static_cast<unsigned>(w)), [&c, promise, note = std::move(note)] {
    if (!note.empty()) c.notify(note, nullptr);
    transport::RequestOptions o;
    o.deadline = std::chrono::steady_clock::now() + 20s;
    c.async_request("ping", nullptr, o, [promise](transport::Response r) { promise->set_value(r.message.has_value()); });
  });
  return answer;
}

/// Whether `answer` came within 30 s, answered.
bool answered(std::future<bool>& answer) {
  return answer.wait_for(30s) == std::future_status::ready && answer.get();
}

/// Requests `n` answers from worker `w`, one after another; notifies
/// `note<i>` before request i when `note` is set. The number answered.
int calls_from(transport::Io& io, transport::StdioConnection& c, int w, int n, const std::string& note = "") {
  int count = 0;
  for (int i = 0; i < n; ++i) {
    auto answer = ping_from(io, c, w, note.empty() ? "" : note + std::to_string(i));
    if (!answered(answer)) break;
    ++count;
  }
  return count;
}

/// Closes `c` and waits until it is over (the child reaped); false if it
/// did not end within 20 s.
bool closed(transport::Connection& c) {
  auto over = std::make_shared<std::promise<void>>();
  auto done = over->get_future();
  c.async_close([over] { over->set_value(); });
  return done.wait_for(20s) == std::future_status::ready;
}

/// True once process `pid` is stopped (state T in /proc).
bool stopped(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  auto end = line.rfind(')');
  return end != std::string::npos && line.size() > end + 2 && line[end + 2] == 'T';
}

}  // namespace

TEST_CASE("stdio connection: its pipes move to the worker calling it, and calls made meanwhile are answered in order") {
  transport::Io io(2);
  std::mutex mu;
  std::condition_variable sent_back;
  std::vector<std::string> notes;  // what the server sent back, in order
  transport::ConnectionHandlers h;
  h.on_message = [&](jsonrpc::Message& m) {
    std::lock_guard lk(mu);
    notes.emplace_back(m.method());
    sent_back.notify_all();
  };
  auto started = transport::StdioConnection::start(io, "t", sed_server(), h);
  REQUIRE(started.ok());
  auto& c = **started;
  const int home = c.worker();
  const int other = 1 - home;
  REQUIRE((home == 0 || home == 1));

  // One client on the other worker: its calls stop crossing.
  CHECK(calls_from(io, c, other, 20, "n/") == 20);
  CHECK(c.worker() == other);
  // A notification ahead of each call reached the server in order, moves included.
  std::vector<std::string> expected;
  for (int i = 0; i < 20; ++i) expected.push_back("n/" + std::to_string(i));
  {
    std::unique_lock lk(mu);
    sent_back.wait_for(lk, 20s, [&] { return notes.size() >= expected.size(); });
    CHECK(notes == expected);
  }

  // And back, when the calls come from the first worker again.
  CHECK(calls_from(io, c, home, 20) == 20);
  CHECK(c.worker() == home);

  // Both workers at once, many calls in flight: every one is answered,
  // however often the pipes move meanwhile.
  std::vector<std::future<bool>> answers;
  for (int i = 0; i < 400; ++i) answers.push_back(ping_from(io, c, i / 50 % 2));
  int count = 0;
  for (auto& a : answers) count += answered(a) ? 1 : 0;
  CHECK(count == 400);

  // Closing after moves ends the child.
  CHECK(closed(c));
  CHECK(!c.alive());
}

TEST_CASE("stdio connection: a message larger than the pipe is written as the child reads it, and the next one follows") {
  transport::Io io(1);
  std::mutex mu;
  std::condition_variable came;
  std::vector<std::pair<std::string, std::size_t>> back;  // method, size of params.text
  transport::ConnectionHandlers h;
  h.on_message = [&](jsonrpc::Message& m) {
    std::lock_guard lk(mu);
    const json::Value* text = m.params() ? json::find(*m.params(), "text") : nullptr;
    back.emplace_back(std::string(m.method()), text && text->IsString() ? text->GetStringLength() : 0);
    came.notify_all();
  };
  // The child stops itself before it reads anything, so the pipe fills
  // and the write has to wait; then it sends every line back.
  auto started = transport::StdioConnection::start(io, "t", {"sh", {"-c", "kill -STOP $$; exec cat"}, {}, ""}, h);
  REQUIRE(started.ok());
  auto& c = **started;
  auto until = std::chrono::steady_clock::now() + 20s;
  while (!stopped(c.pid()) && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  REQUIRE(stopped(c.pid()));
  // 1 MiB: a pipe holds 64 KiB.
  const std::string text(1 << 20, 'x');
  json::Document params(rapidjson::kObjectType);
  params.AddMember("text", json::ref(text), params.GetAllocator());
  CHECK(c.notify("big", &params));
  CHECK(c.notify("after", nullptr));
  kill(c.pid(), SIGCONT);
  {
    std::unique_lock lk(mu);
    came.wait_for(lk, 20s, [&] { return back.size() >= 2; });
    REQUIRE(back.size() == 2);
    CHECK(back[0] == std::pair<std::string, std::size_t>("big", text.size()));
    CHECK(back[1].first == "after");
  }
  CHECK(closed(c));
}

TEST_CASE("stdio connection: calls from a coroutine on the pipes' own worker are answered, and fail once the child is gone") {
  transport::Io io(1);
  auto gone = std::make_shared<std::promise<void>>();
  auto gone_future = gone->get_future();
  transport::ConnectionHandlers h;
  h.on_close = [gone](const std::string&) { gone->set_value(); };
  auto started = transport::StdioConnection::start(io, "t", sed_server(), h);
  REQUIRE(started.ok());
  std::shared_ptr<transport::StdioConnection> c = *started;
  // A coroutine on the worker the pipes are on, as a client's request is.
  auto calls = [c](int n) -> Task<std::vector<transport::Response>> {
    std::vector<transport::Response> out;
    for (int i = 0; i < n; ++i) {
      transport::RequestOptions o;
      o.deadline = std::chrono::steady_clock::now() + 20s;
      out.push_back(co_await c->call("ping", nullptr, o));
    }
    co_return out;
  };
  auto answered = asio::co_spawn(io.worker(0), calls(20), asio::use_future);
  REQUIRE(answered.wait_for(30s) == std::future_status::ready);
  for (const auto& r : answered.get()) CHECK(r.message.has_value());

  kill(c->pid(), SIGKILL);
  REQUIRE(gone_future.wait_for(20s) == std::future_status::ready);
  auto refused = asio::co_spawn(io.worker(0), calls(2), asio::use_future);
  REQUIRE(refused.wait_for(30s) == std::future_status::ready);
  for (const auto& r : refused.get()) CHECK(r.failure == transport::Failure::Closed);
  // Even refused at once, a request is never completed inside the
  // async_request that made it.
  auto after = std::make_shared<std::promise<bool>>();
  auto completed_after_return = after->get_future();
  asio::post(io.worker(0), [c, after] {
    auto returned = std::make_shared<bool>(false);
    transport::RequestOptions o;
    o.deadline = std::chrono::steady_clock::now() + 20s;
    c->async_request("ping", nullptr, o, [after, returned](transport::Response) { after->set_value(*returned); });
    *returned = true;
  });
  REQUIRE(completed_after_return.wait_for(30s) == std::future_status::ready);
  CHECK(completed_after_return.get());

  CHECK(closed(*c));
}

TEST_CASE("stdio connection: a request cancelled on the pipes' own worker ends, cancelled") {
  transport::Io io(1);
  auto started = transport::StdioConnection::start(io, "t", {"sh", {"-c", "cat >/dev/null"}, {}, ""}, {});
  REQUIRE(started.ok());
  std::shared_ptr<transport::StdioConnection> c = *started;
  CancelSignal cancel;
  auto promise = std::make_shared<std::promise<transport::Failure>>();
  auto failure = promise->get_future();
  asio::post(io.worker(0), [c, &cancel, promise] {
    transport::RequestOptions o;
    o.deadline = std::chrono::steady_clock::now() + 60s;
    o.cancel = &cancel;
    c->async_request("ping", nullptr, o, [promise](transport::Response r) { promise->set_value(r.failure); });
  });
  // Cancelled from the same worker, as a client's notifications/cancelled
  // read there is: the request is in flight by then (the posts run in order).
  asio::post(io.worker(0), [&cancel] { cancel.cancel(); });
  REQUIRE(failure.wait_for(30s) == std::future_status::ready);
  CHECK(failure.get() == transport::Failure::Cancelled);
  CHECK(closed(*c));
}
