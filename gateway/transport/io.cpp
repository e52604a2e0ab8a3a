#include "transport/io.hpp"

#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace mcpgw::transport {

namespace {
/// The worker the calling thread runs (set once by the thread itself).
thread_local const void* tl_io = nullptr;
thread_local int tl_worker = -1;
}  // namespace

struct Io::Worker {
  // Concurrency hint 1: one thread runs it, so the scheduler never wakes
  // another to take a handler.
  asio::io_context ctx{1};
  asio::executor_work_guard<asio::io_context::executor_type> work{asio::make_work_guard(ctx)};
  /// Always pending, a second ahead. The kernel timer of a worker is re-armed
  /// whenever a new deadline is its earliest; without the tick every
  /// request's (an upstream call's timeout, a connection's header and write
  /// deadlines, seconds ahead) would be, and each would cost two system
  /// calls (arming, then the next earliest).
  asio::steady_timer tick{ctx};
  std::thread thread;
  BufferCache* decays = nullptr;  ///< the cache whose stale buffers this worker's tick lets go

  void arm_tick() {
    tick.expires_after(std::chrono::seconds(1));
    tick.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      if (decays) decays->decay();
      arm_tick();
    });
  }
};

Io::Io(unsigned threads) {
  unsigned n = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  workers_.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    workers_.push_back(std::make_unique<Worker>());
    if (i == 0) workers_.back()->decays = &buffers_;
    workers_.back()->arm_tick();
  }
  for (unsigned i = 0; i < n; ++i) {
    Worker& w = *workers_[i];
    w.thread = std::thread([this, &w, i] {
      tl_io = this;
      tl_worker = static_cast<int>(i);
      for (;;) {
        try {
          w.ctx.run();
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

int Io::current() const { return tl_io == this ? tl_worker : -1; }

asio::io_context& Io::worker(unsigned i) { return workers_.at(i)->ctx; }

int Io::index_of(const asio::io_context& ctx) const {
  for (std::size_t i = 0; i < workers_.size(); ++i)
    if (&workers_[i]->ctx == &ctx) return static_cast<int>(i);
  return -1;
}

asio::io_context& Io::context() {
  int here = current();
  return here >= 0 ? workers_[static_cast<std::size_t>(here)]->ctx : next();
}

asio::io_context& Io::next() { return workers_[turn_.fetch_add(1, std::memory_order_relaxed) % workers_.size()]->ctx; }

void Io::stop() {
  for (auto& w : workers_) {
    w->work.reset();
    w->ctx.stop();
  }
  for (auto& w : workers_) {
    if (!w->thread.joinable()) continue;
    // Called from a handler: that thread returns from run() by itself.
    if (w->thread.get_id() == std::this_thread::get_id()) w->thread.detach();
    else w->thread.join();
  }
}

}  // namespace mcpgw::transport
