#pragma once
// Crossing between coroutines on the I/O loop and threads that may block:
// offload() runs blocking work on a WorkerPool and resumes the coroutine
// with its result; block_on() runs a coroutine from a thread that may block
// (a plugin's pool thread) and waits for it there.
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <future>
#include <optional>
#include <type_traits>
#include <utility>

#include "util/event.hpp"
#include "util/worker_pool.hpp"

namespace mcpgw {

/// Runs `fn` on `pool` and resumes with what it returned; `refused()` when
/// the pool is shutting down. `fn` and `refused` return the same type.
template <class Fn, class Refused>
auto offload(WorkerPool& pool, Fn fn, Refused refused) -> Task<decltype(fn())> {
  using T = decltype(fn());
  asio::any_io_executor ex = co_await asio::this_coro::executor;
  // The initiation captures references only: GCC 12 destroys a closure
  // inside a co_await expression twice.
  auto initiate = [&pool, &ex, &fn](auto handler) {
    auto h = shared_handler<std::optional<T>>(std::move(handler));
    bool queued = pool.submit([h, ex, fn = std::move(fn)]() mutable {
      asio::post(ex, [h, v = std::optional<T>(fn())]() mutable { h(std::move(v)); });
    });
    if (!queued) asio::post(ex, [h] { h(std::optional<T>()); });
  };
  std::optional<T> out =
      co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::optional<T>)>(initiate, asio::use_awaitable);
  if (!out) co_return refused();
  co_return std::move(*out);
}

/// Runs `task` on `ex` and waits for its result in this thread, which must
/// not be one of `ex`'s. `stopped()` when the loop stops before it ends.
template <class T, class Stopped>
T block_on(const asio::any_io_executor& ex, Task<T> task, Stopped stopped) {
  try {
    if constexpr (std::is_void_v<T>) {
      asio::co_spawn(ex, std::move(task), asio::use_future).get();
    } else {
      // use_future wants a default-constructible result.
      auto wrapped = [](Task<T> t) -> Task<std::optional<T>> { co_return co_await std::move(t); };
      return std::move(*asio::co_spawn(ex, wrapped(std::move(task)), asio::use_future).get());
    }
  } catch (const std::future_error&) {
    return stopped();
  }
}

}  // namespace mcpgw
