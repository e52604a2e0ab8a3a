#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "transport/child_process.hpp"
#include "transport/stdio_connection.hpp"
#include "util/worker_pool.hpp"

using namespace mcpgw;
using namespace std::chrono_literals;

TEST_CASE("child process: runs in its own process group and is reaped") {
  auto c = transport::ChildProcess::spawn({"sh", {"-c", "echo $MCPGW_T; exit 3"}, {{"MCPGW_T", "hello"}}, "/tmp"});
  REQUIRE(c.ok());
  CHECK(getpgid((*c)->pid()) == (*c)->pid());
  char buf[16] = {};
  CHECK(read((*c)->stdout_fd(), buf, sizeof buf) == 6);
  CHECK(std::string(buf) == "hello\n");
  auto st = (*c)->wait_exit(5s);
  REQUIRE(st);
  CHECK(*st == "exit 3");
}

TEST_CASE("child process: a missing command or cwd is an error naming it") {
  auto c = transport::ChildProcess::spawn({"/nonexistent/server", {}, {}, ""});
  REQUIRE(!c.ok());
  CHECK(c.error().find("/nonexistent/server") != std::string::npos);
  c = transport::ChildProcess::spawn({"true", {}, {}, "/nonexistent-dir"});
  REQUIRE(!c.ok());
  CHECK(c.error().find("/nonexistent-dir") != std::string::npos);
}

TEST_CASE("child process: stop kills the whole group, grandchildren included") {
  auto c = transport::ChildProcess::spawn({"sh", {"-c", "trap '' TERM; sleep 100 & echo $!; wait"}, {}, ""});
  REQUIRE(c.ok());
  char buf[32] = {};
  REQUIRE(read((*c)->stdout_fd(), buf, sizeof buf) > 0);
  pid_t grandchild = std::atoi(buf);
  REQUIRE(grandchild > 0);
  CHECK((*c)->stop(200ms).rfind("signal", 0) == 0);
  // The grandchild was SIGKILLed with the group; it is reaped by init, so
  // poll for its disappearance with a deadline.
  auto until = std::chrono::steady_clock::now() + 5s;
  while (kill(grandchild, 0) == 0 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  CHECK(kill(grandchild, 0) != 0);
}

TEST_CASE("stdio connection: request/response, garbage lines and exit") {
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
  auto c = transport::StdioConnection::start("t", {"sh", {"-c", script}, {}, ""}, h);
  REQUIRE(c.ok());
  transport::RequestOptions o;
  o.deadline = std::chrono::steady_clock::now() + 5s;
  auto r = (*c)->request("ping", nullptr, o);
  REQUIRE(r.message);
  CHECK((*r.message->result())["ok"].GetBool());
  r = (*c)->request("ping", nullptr, o);
  CHECK(!r.message);
  CHECK(r.failure == transport::Failure::Closed);
  std::unique_lock lk(mu);
  cv.wait_for(lk, 5s, [&] { return !closed.empty(); });
  CHECK(closed.find("exit 4") != std::string::npos);
}

TEST_CASE("stdio connection: a silent server times out") {
  auto c = transport::StdioConnection::start("t", {"sh", {"-c", "cat >/dev/null"}, {}, ""}, {});
  REQUIRE(c.ok());
  transport::RequestOptions o;
  o.deadline = std::chrono::steady_clock::now() + 100ms;
  auto r = (*c)->request("ping", nullptr, o);
  CHECK(!r.message);
  CHECK(r.failure == transport::Failure::Timeout);
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
