#include "transport/io.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace mcpgw::transport {

Io::Io(unsigned threads)
    : ctx_(static_cast<int>(threads ? threads : std::max(1u, std::thread::hardware_concurrency()))),
      work_(asio::make_work_guard(ctx_)) {
  unsigned n = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  threads_.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    threads_.emplace_back([this] {
      for (;;) {
        try {
          ctx_.run();
          return;
        } catch (const std::exception& e) {
          // A handler that throws must not take the loop (and every client
          // on it) down; the throwing operation is lost, the rest goes on.
          spdlog::error("unhandled exception on the I/O loop: {}", e.what());
        }
      }
    });
  }
}

Io::~Io() { stop(); }

void Io::stop() {
  work_.reset();
  ctx_.stop();
  for (auto& t : threads_) {
    if (!t.joinable()) continue;
    // Called from a handler: that thread returns from run() by itself.
    if (t.get_id() == std::this_thread::get_id()) t.detach();
    else t.join();
  }
  threads_.clear();
}

}  // namespace mcpgw::transport
