#include "transport/connection.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>

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

Task<> Connection::shut() {
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(
      [this](auto handler) {
        auto ex = asio::get_associated_executor(handler);
        auto h = shared_handler<>(std::move(handler));
        async_close([h, ex] { asio::dispatch(ex, h); });
      },
      asio::use_awaitable);
}

}  // namespace mcpgw::transport
