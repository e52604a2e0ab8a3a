#include "transport/connection.hpp"

#include <future>

namespace mcpgw::transport {

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

void Connection::close() {
  auto promise = std::make_shared<std::promise<void>>();
  auto over = promise->get_future();
  // A handler destroyed unrun (the loop stopped) makes the future ready too.
  async_close([p = std::move(promise)] { p->set_value(); });
  over.wait();
}

}  // namespace mcpgw::transport
