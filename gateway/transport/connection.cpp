#include "transport/connection.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <future>

namespace mcpgw::transport {

Task<Response> Connection::call(std::string_view method, const json::Value* params, RequestOptions opts) {
  co_return co_await asio::async_initiate<decltype(asio::use_awaitable), void(Response)>(
      [&](auto handler) {
        // The transport completes on an I/O thread; the coroutine resumes on
        // its own executor.
        auto ex = asio::get_associated_executor(handler);
        auto h = shared_handler<Response>(std::move(handler));
        async_request(method, params, std::move(opts), [h, ex](Response r) {
          asio::dispatch(ex, [h, r = std::move(r)]() mutable { h(std::move(r)); });
        });
      },
      asio::use_awaitable);
}

Response Connection::request(std::string_view method, const json::Value* params, const RequestOptions& opts) {
  // Held by the handler alone: it may be destroyed on an I/O thread after
  // get() has returned here, and a handler destroyed unrun breaks the promise
  // instead of leaving this thread waiting.
  auto promise = std::make_shared<std::promise<Response>>();
  auto result = promise->get_future();
  async_request(method, params, opts, [p = std::move(promise)](Response r) { p->set_value(std::move(r)); });
  try {
    return result.get();
  } catch (const std::future_error&) {
    // The handler was destroyed unrun: the I/O loop stopped (shutdown).
    return {std::nullopt, Failure::Closed, "the I/O loop stopped"};
  }
}

Task<> Connection::shut() {
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(
      [this](auto handler) {
        auto ex = asio::get_associated_executor(handler);
        auto h = shared_handler<>(std::move(handler));
        async_close([h, ex] { asio::dispatch(ex, h); });
      },
      asio::use_awaitable);
}

void Connection::close() {
  auto promise = std::make_shared<std::promise<void>>();
  auto over = promise->get_future();
  // A handler destroyed unrun (the loop stopped) makes the future ready too.
  async_close([p = std::move(promise)] { p->set_value(); });
  over.wait();
}

}  // namespace mcpgw::transport
