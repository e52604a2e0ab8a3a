#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "jsonrpc/message.hpp"
#include "transport/batch.hpp"

using namespace mcpgw;

TEST_CASE("batch gate: requests start in order, at most `concurrency` at a time") {
  auto gate = std::make_shared<transport::BatchGate>(3);
  std::vector<int> started;
  for (int i = 0; i < 10; ++i) gate->start([&started, i] { started.push_back(i); });
  CHECK(started == std::vector<int>{0, 1, 2});
  gate->done();
  CHECK(started == std::vector<int>{0, 1, 2, 3});
  gate->done();
  gate->done();
  CHECK(started.size() == 6);
  for (int i = 0; i < 6; ++i) gate->done();
  CHECK(started.size() == 10);
  CHECK(started.back() == 9);
}

TEST_CASE("batch gate: requests answered as they start run in a loop, not by recursion") {
  // 200,000 requests that each reply at once would nest 200,000 frames deep
  // if a reply started the next one by calling it.
  auto gate = std::make_shared<transport::BatchGate>(2);
  std::size_t ran = 0;
  for (int i = 0; i < 200000; ++i)
    gate->start([&] {
      ++ran;
      gate->done();
    });
  CHECK(ran == 200000);
}

TEST_CASE("batch gate: replies from other threads free slots for the queue") {
  auto gate = std::make_shared<transport::BatchGate>(4);
  std::atomic<int> running{0}, most{0}, ran{0};
  std::vector<std::thread> threads;
  std::mutex mu;
  for (int i = 0; i < 64; ++i)
    gate->start([&] {
      int now = ++running;
      for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
      }
      std::lock_guard lk(mu);
      threads.emplace_back([&] {
        --running;
        ++ran;
        gate->done();
      });
    });
  for (std::size_t joined = 0;;) {
    std::vector<std::thread> batch;
    {
      std::lock_guard lk(mu);
      if (joined == 64 && ran == 64) break;
      batch.swap(threads);
    }
    for (auto& t : batch) t.join();
    joined += batch.size();
  }
  CHECK(ran == 64);
  CHECK(most <= 4);
}

TEST_CASE("batch: an oversized batch is refused whole, naming the limit") {
  auto p = jsonrpc::parse(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},3])", 2);
  CHECK(p.oversized_batch == 3);
  CHECK(p.messages.empty());
  CHECK(p.errors.empty());
  CHECK(jsonrpc::parse(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},3])", 2).oversized_batch == 0);
  CHECK(jsonrpc::parse(R"([1,2,3])", 0).oversized_batch == 0);
  auto refusal = json::parse(transport::batch_refusal(3, 2));
  REQUIRE(refusal);
  CHECK((*refusal)["error"]["code"].GetInt() == -32000);
  CHECK(std::string((*refusal)["error"]["message"].GetString()).find("limits.max_batch_size (2)") != std::string::npos);
  CHECK((*refusal)["error"]["data"]["size"].GetInt() == 3);
  CHECK((*refusal)["id"].IsNull());
}
