#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>

#include "transport/child_process.hpp"
#include "transport/stdio_connection.hpp"
#include "util/worker_pool.hpp"

using namespace mcpgw;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

/// The exit status of `c`, waited for (the loop reaps it).
std::string exit_status(transport::ChildProcess& c) {
  auto done = std::make_shared<std::promise<std::string>>();
  auto status = done->get_future();
  c.on_exit([done](const std::string& s) { done->set_value(s); });
  return status.wait_for(5s) == std::future_status::ready ? status.get() : "still running";
}

/// `c`'s answer to `method`, waited for in the test's thread (never one of the loop's).
transport::Response request(transport::Connection& c, std::string_view method, const transport::RequestOptions& o) {
  auto promise = std::make_shared<std::promise<transport::Response>>();
  auto answer = promise->get_future();
  c.async_request(method, nullptr, o, [promise](transport::Response r) { promise->set_value(std::move(r)); });
  return answer.get();
}

/// Closes `c` and waits until it is over (the child reaped).
void close(transport::Connection& c) {
  auto promise = std::make_shared<std::promise<void>>();
  auto over = promise->get_future();
  c.async_close([promise] { promise->set_value(); });
  over.wait();
}

}  // namespace

TEST_CASE("child process: runs in its own process group and is reaped") {
  transport::Io io(1);
  // The child waits for its stdin to close, so its process group is looked
  // at while it lives (an exited child may already be reaped by the loop).
  auto c = transport::ChildProcess::spawn(asio::make_strand(io.executor()),
                                          {"sh", {"-c", "echo $MCPGW_T; read x; exit 3"}, {{"MCPGW_T", "hello"}}, "/tmp"});
  REQUIRE(c.ok());
  char buf[16] = {};
  CHECK(read((*c)->out().native_handle(), buf, sizeof buf) == 6);
  CHECK(std::string(buf) == "hello\n");
  CHECK(getpgid((*c)->pid()) == (*c)->pid());
  asio::post((*c)->in().get_executor(), [&c] {
    boost::system::error_code ignored;
    (*c)->in().close(ignored);
  });
  CHECK(exit_status(**c) == "exit 3");
  // Reaped: no zombie is left behind.
  CHECK(waitpid((*c)->pid(), nullptr, WNOHANG) < 0);
}

TEST_CASE("child process: a missing command or cwd is an error naming it") {
  transport::Io io(1);
  auto c = transport::ChildProcess::spawn(io.executor(), {"/nonexistent/server", {}, {}, ""});
  REQUIRE(!c.ok());
  CHECK(c.error().find("/nonexistent/server") != std::string::npos);
  c = transport::ChildProcess::spawn(io.executor(), {"true", {}, {}, "/nonexistent-dir"});
  REQUIRE(!c.ok());
  CHECK(c.error().find("/nonexistent-dir") != std::string::npos);
}

TEST_CASE("child process: stop kills the whole group, grandchildren included") {
  transport::Io io(1);
  auto c = transport::ChildProcess::spawn(asio::make_strand(io.executor()),
                                          {"sh", {"-c", "trap '' TERM; sleep 100 & echo $!; wait"}, {}, ""});
  REQUIRE(c.ok());
  char buf[32] = {};
  REQUIRE(read((*c)->out().native_handle(), buf, sizeof buf) > 0);
  pid_t grandchild = std::atoi(buf);
  REQUIRE(grandchild > 0);
  (*c)->stop(200ms);
  CHECK(exit_status(**c).rfind("signal", 0) == 0);
  // The grandchild was SIGKILLed with the group; it is reaped by init, so
  // poll for its disappearance with a deadline.
  auto until = std::chrono::steady_clock::now() + 5s;
  while (kill(grandchild, 0) == 0 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  CHECK(kill(grandchild, 0) != 0);
}

TEST_CASE("stdio connection: request/response, garbage lines and exit") {
  transport::Io io(2);
  // A tiny line server in sh: answers one request, then prints garbage and exits.
  const char* script =
      "read line; echo 'not json'; "
      "echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"ok\":true}}'; "
      "read line; exit 4";
  std::mutex mu;
  std::condition_variable cv;
  std::string closed;
  transport::ConnectionHandlers h;
  h.on_close = [&](const std::string& why) {
    std::lock_guard lk(mu);
    closed = why;
    cv.notify_all();
  };
  auto c = transport::StdioConnection::start(io, "t", {"sh", {"-c", script}, {}, ""}, h);
  REQUIRE(c.ok());
  transport::RequestOptions o;
  o.deadline = std::chrono::steady_clock::now() + 5s;
  auto r = request(**c, "ping", o);
  REQUIRE(r.message);
  CHECK((*r.message->result())["ok"].GetBool());
  r = request(**c, "ping", o);
  CHECK(!r.message);
  CHECK(r.failure == transport::Failure::Closed);
  {
    std::unique_lock lk(mu);
    cv.wait_for(lk, 5s, [&] { return !closed.empty(); });
    CHECK(closed.find("exit 4") != std::string::npos);
  }
  close(**c);
}

TEST_CASE("stdio connection: a silent server times out, and a cancelled request ends at once") {
  transport::Io io(1);
  auto c = transport::StdioConnection::start(io, "t", {"sh", {"-c", "cat >/dev/null"}, {}, ""}, {});
  REQUIRE(c.ok());
  transport::RequestOptions o;
  o.deadline = std::chrono::steady_clock::now() + 100ms;
  auto r = request(**c, "ping", o);
  CHECK(!r.message);
  CHECK(r.failure == transport::Failure::Timeout);
  CancelSignal cancel;
  cancel.cancel();
  o.deadline = std::chrono::steady_clock::now() + 60s;
  o.cancel = &cancel;
  r = request(**c, "ping", o);
  CHECK(r.failure == transport::Failure::Cancelled);
  close(**c);
}

TEST_CASE("stdio connection: an answer over the limit fails its request only; the next one works") {
  transport::Io io(1);
  // Answers the first request with a 5000-byte result (id last, as the
  // TypeScript SDK writes it), the second with a small one.
  const char* script =
      "read line; printf '{\"result\":{\"t\":\"%05000d\"},\"jsonrpc\":\"2.0\",\"id\":1}\\n' 0; "
      "read line; echo '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}'; cat >/dev/null";
  auto c = transport::StdioConnection::start(io, "t", {"sh", {"-c", script}, {}, ""}, {}, 1000);
  REQUIRE(c.ok());
  transport::RequestOptions o;
  o.deadline = std::chrono::steady_clock::now() + 5s;
  auto r = request(**c, "big", o);
  CHECK(!r.message);
  CHECK(r.failure == transport::Failure::TooLarge);
  CHECK(r.detail.find("max_response_bytes") != std::string::npos);
  r = request(**c, "small", o);
  CHECK(r.message);
  close(**c);
}

TEST_CASE("worker pool: runs tasks concurrently and drains on destruction") {
  std::atomic<int> done{0};
  std::mutex mu;
  std::condition_variable cv;
  int waiting = 0;
  {
    WorkerPool pool(0, 8, 50);
    // Four tasks that each wait for all four to start prove they overlap.
    for (int i = 0; i < 4; ++i)
      CHECK(pool.submit([&] {
        std::unique_lock lk(mu);
        ++waiting;
        cv.notify_all();
        cv.wait_for(lk, 5s, [&] { return waiting == 4; });
        ++done;
      }));
  }
  CHECK(done == 4);
}
