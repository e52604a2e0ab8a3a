#pragma once
// A loop of its own for unit tests of coroutines: run(task) runs one on a
// strand of it and waits for the result in the test's thread.
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include <thread>
#include <vector>

#include "util/offload.hpp"

namespace mcpgw::testing {

class Loop {
 public:
  explicit Loop(unsigned threads = 2) : work_(ctx_.get_executor()) {
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { ctx_.run(); });
  }
  ~Loop() {
    work_.reset();
    ctx_.stop();
    for (auto& t : threads_) t.join();
  }
  asio::any_io_executor executor() { return ctx_.get_executor(); }
  /// A new strand of the loop.
  asio::any_io_executor strand() { return asio::make_strand(ctx_); }
  template <class T>
  T run(Task<T> task) {
    return block_on(strand(), std::move(task), []() -> T { throw std::runtime_error("the loop stopped"); });
  }

 private:
  asio::io_context ctx_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
};

}  // namespace mcpgw::testing
