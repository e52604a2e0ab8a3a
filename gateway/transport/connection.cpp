#include "transport/connection.hpp"

#include <future>

namespace mcpgw::transport {

Response Connection::request(std::string_view method, const json::Value* params, const RequestOptions& opts) {
  // Shared: `done` may run (on an I/O thread) after get() has returned here,
  // the promise fulfilled but the handler not yet destroyed.
  auto promise = std::make_shared<std::promise<Response>>();
  auto result = promise->get_future();
  async_request(method, params, opts, [promise](Response r) { promise->set_value(std::move(r)); });
  return result.get();
}

void Connection::close() {
  auto promise = std::make_shared<std::promise<void>>();
  auto over = promise->get_future();
  async_close([promise] { promise->set_value(); });
  over.wait();
}

}  // namespace mcpgw::transport
