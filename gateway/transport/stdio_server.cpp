#include "transport/stdio_server.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <unordered_map>
#include <vector>

#include "transport/http_listener.hpp"
#include "transport/line_buffer.hpp"
#include "util/event.hpp"
#include "util/memory.hpp"
#include "util/spliced_text.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport {
namespace {

constexpr std::size_t kMaxLine = 64 * 1024 * 1024;
/// Output waiting for a client that does not read its stdin: past this
/// (with at least one line waiting) the client is given up on.
constexpr std::size_t kMaxPending = 256 * 1024 * 1024;

/// Opens `fd` anew for the loop and remembers its flags: Asio makes the
/// descriptor non-blocking, and the open file is shared with our parent.
struct Descriptor {
  Descriptor(const asio::any_io_executor& ex, int fd) : stream(ex), fd(fd), flags(fcntl(fd, F_GETFL)) {
    // Asio's reactor accepts what epoll refuses (a regular file, /dev/null)
    // as long as its operations never block, which holds for those.
    stream.assign(::dup(fd));
  }
  ~Descriptor() {
    boost::system::error_code ec;
    stream.close(ec);
    if (flags >= 0) fcntl(fd, F_SETFL, flags);
  }
  asio::posix::stream_descriptor stream;
  int fd, flags;
};

}  // namespace

struct StdioServer::Impl : std::enable_shared_from_this<Impl> {
  Impl(Handler& h, ClientContext c, Io& io, BatchLimits b, int in_fd, int out_fd)
      : handler(h), ctx(std::move(c)), batches(b), strand(asio::make_strand(io.context())), in(strand, in_fd),
        out(strand, out_fd) {}

  Handler& handler;
  ClientContext ctx;
  const BatchLimits batches;
  MemoryTrimmer trimmer;  // after large batches
  asio::any_io_executor strand;
  Descriptor in, out;
  Event wake{Resume::Inline};  // the writer's; notified with no lock held
  std::atomic<bool> stopping{false};

  util::Mutex mu;
  std::condition_variable cv;
  std::deque<SplicedText> pending GUARDED_BY(mu);  // lines for stdout, each written from its pieces
  std::unordered_map<const void*, std::size_t> slots GUARDED_BY(mu);  // a request's progress line in `pending`
  std::size_t pending_bytes GUARDED_BY(mu) = 0;
  std::size_t in_flight GUARDED_BY(mu) = 0;
  // Also set through a pointer to member (ended()), which the analysis
  // does not follow: with mu held there too.
  bool reading GUARDED_BY(mu) = true;
  bool writing GUARDED_BY(mu) = true;
  bool closing GUARDED_BY(mu) = false;
  bool broken GUARDED_BY(mu) = false;

  /// Queues one line for stdout; false when the client is gone. A line
  /// under `key` (a request's progress) replaces the one still waiting
  /// under it: the latest wins.
  bool write(SplicedText line, const void* key = nullptr) {
    line.append("\n");
    bool gave_up = false;
    {
      util::MutexLock lk(mu);
      if (broken || closing) return false;
      if (auto it = key ? slots.find(key) : slots.end();
          it != slots.end() && http::StreamQueue::congested(pending.size(), pending_bytes)) {
        pending_bytes = pending_bytes - pending[it->second].size() + line.size();
        pending[it->second] = std::move(line);
        return true;
      }
      if (!pending.empty() && pending_bytes + line.size() > kMaxPending) {
        spdlog::error("stdio client reads nothing ({} bytes waiting): giving up on it", pending_bytes);
        broken = gave_up = true;
      } else {
        pending_bytes += line.size();
        pending.push_back(std::move(line));
        if (key) slots[key] = pending.size() - 1;
      }
    }
    if (gave_up) stop();
    wake.notify();
    return !gave_up;
  }

  void stop() {
    stopping.store(true);
    asio::post(strand, [self = shared_from_this()] {
      boost::system::error_code ec;
      self->in.stream.cancel(ec);
    });
  }

  void add_request() {
    util::MutexLock lk(mu);
    ++in_flight;
  }
  void done_request() {
    util::MutexLock lk(mu);
    if (--in_flight == 0) cv.notify_all();
  }

  Task<void> read_loop(std::function<void(std::string_view)> dispatch);
  Task<void> write_loop();
  /// Marks a loop ended (`flag`: reading or writing), however it ended.
  auto ended(bool Impl::*flag, const char* what) {
    return [self = shared_from_this(), flag, what](std::exception_ptr ep) {
      if (ep) {
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          spdlog::error("stdio {} failed: {}", what, e.what());
        }
      }
      util::MutexLock lk(self->mu);
      (*self).*flag = false;
      self->cv.notify_all();
    };
  }
  class Call;
};

Task<void> StdioServer::Impl::read_loop(std::function<void(std::string_view)> dispatch) {
  LineBuffer lines(kMaxLine);
  std::vector<char> chunk(65536);
  boost::system::error_code ec;
  while (!stopping.load()) {
    std::size_t n = co_await in.stream.async_read_some(asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    if (!lines.feed(std::string_view(chunk.data(), n), dispatch))
      write(jsonrpc::make_error(json::Value(), jsonrpc::kInvalidRequest, "Invalid Request: line over 64 MiB"));
  }
}

Task<void> StdioServer::Impl::write_loop() {
  std::deque<SplicedText> lines;
  std::string joined;  // the plain lines among them, one after the other
  std::vector<asio::const_buffer> pieces;
  for (;;) {
    std::uint64_t seen = wake.generation();
    bool done;
    {
      util::MutexLock lk(mu);
      lines.swap(pending);
      slots.clear();
      pending_bytes = 0;
      done = closing || broken;
    }
    // What is waiting goes in gathered writes: a relayed result of
    // megabytes from the buffer it was read into, never copied into its
    // line or a batch of lines; the gateway's own lines (progress, small
    // answers) joined, so that a burst of them is one buffer.
    std::size_t plain = 0;
    for (const auto& l : lines)
      if (l.pieces()[1].empty()) plain += l.size();
    joined.clear();
    joined.reserve(plain);  // no reallocation below: pieces point into it
    pieces.clear();
    bool last_joined = false;
    for (const auto& l : lines) {
      auto [head, part, tail] = l.pieces();
      if (part.empty()) {
        const char* at = joined.data() + joined.size();
        joined.append(head).append(tail);
        if (last_joined) pieces.back() = asio::const_buffer(pieces.back().data(), pieces.back().size() + l.size());
        else pieces.emplace_back(at, l.size());
        last_joined = true;
        continue;
      }
      for (std::string_view p : {head, part, tail})
        if (!p.empty()) pieces.emplace_back(p.data(), p.size());
      last_joined = false;
    }
    if (!pieces.empty()) {
      boost::system::error_code ec;
      co_await asio::async_write(out.stream, pieces, asio::redirect_error(asio::use_awaitable, ec));
      lines.clear();
      if (!ec) continue;
      util::MutexLock lk(mu);
      broken = true;
      break;
    }
    if (done) break;
    co_await wake.wait(seen, Event::Clock::time_point::max());
  }
}

namespace {

/// Collects the replies of one batch and writes them as one array; its
/// requests run `gate`'s number at a time.
struct Batch {
  std::function<bool(std::string)> out;
  std::shared_ptr<BatchGate> gate;
  std::function<void()> after;  ///< once the batch is answered
  util::Mutex mu;
  std::vector<std::string> replies GUARDED_BY(mu);
  std::size_t expected = 0;  ///< set before the batch is shared
  void add(std::string r) {
    std::string line;
    {
      util::MutexLock lk(mu);
      replies.push_back(std::move(r));
      if (replies.size() != expected) return;
      line.push_back('[');
      for (auto& x : replies) {
        if (line.size() > 1) line += ',';
        line += x;
      }
      line.push_back(']');
    }
    out(std::move(line));
    if (after) after();
  }
};

}  // namespace

/// One request of the stdio client.
class StdioServer::Impl::Call final : public Exchange {
 public:
  Call(std::shared_ptr<Impl> server, std::shared_ptr<Batch> batch)
      : server_(std::move(server)), batch_(std::move(batch)) {
    server_->add_request();
  }
  bool send(std::string msg) override { return server_->write(std::move(msg)); }
  void progress(std::string msg) override { server_->write(std::move(msg), this); }
  void reply(SplicedText response, int) override {
    // A line of its own either way (the newline is appended to it).
    if (batch_) batch_->add(std::move(response).flatten());
    else server_->write(std::move(response));
    server_->done_request();
    if (batch_) batch_->gate->done();
  }

 private:
  std::shared_ptr<Impl> server_;
  std::shared_ptr<Batch> batch_;
};

StdioServer::StdioServer(Handler& handler, ClientContext ctx, Io& io, BatchLimits batches, int in_fd, int out_fd)
    : impl_(std::make_shared<Impl>(handler, std::move(ctx), io, batches, in_fd, out_fd)) {}

StdioServer::~StdioServer() = default;

void StdioServer::stop() { impl_->stop(); }

Result<void> StdioServer::run() {
  auto im = impl_;
  auto opened = im->handler.open_session(im->ctx);
  if (!opened) return Error{opened.error()};
  std::shared_ptr<Session> session = std::move(*opened);
  std::weak_ptr<Impl> weak = im;
  auto out = [weak](std::string msg) {
    auto s = weak.lock();
    return s && s->write(std::move(msg));
  };
  session->bind("", im->ctx, out);

  auto dispatch = [im, session, out](std::string_view line) {
    // Kept with what is read from it: a tool call's arguments go upstream as these bytes.
    jsonrpc::Parsed parsed = jsonrpc::parse_keeping(std::string(line), im->batches.max_size);
    if (parsed.oversized_batch) {
      spdlog::info("refused (batch): a batch of {} messages, over limits.max_batch_size", parsed.oversized_batch);
      im->write(batch_refusal(parsed.oversized_batch, im->batches.max_size));
      return;
    }
    std::size_t requests = parsed.errors.size();
    for (auto& m : parsed.messages) requests += m.is_request();
    std::shared_ptr<Batch> batch;
    if (parsed.batch && requests > 0) {
      batch = std::make_shared<Batch>();
      batch->out = out;
      batch->expected = requests;
      batch->gate = std::make_shared<BatchGate>(im->batches.concurrency);
      batch->after = [im, bytes = line.size()] { im->trimmer.after(bytes); };
    }
    for (auto& e : parsed.errors) batch ? batch->add(std::move(e)) : void(im->write(std::move(e)));
    for (auto& m : parsed.messages) {
      if (!m.is_request() || !batch) {
        auto ex = m.is_request() ? std::make_shared<Impl::Call>(im, batch) : nullptr;
        im->handler.handle(session, std::move(m), std::move(ex));
        continue;
      }
      // A batch's requests run batch_concurrency at a time, in order; each
      // counts as in flight from now, so the session outlasts the queue.
      auto ex = std::make_shared<Impl::Call>(im, batch);
      batch->gate->start([im, session, ex, m = std::make_shared<jsonrpc::Message>(std::move(m))] {
        im->handler.handle(session, std::move(*m), ex);
      });
    }
  };
  asio::co_spawn(im->strand, im->read_loop(dispatch), im->ended(&Impl::reading, "reader"));
  asio::co_spawn(im->strand, im->write_loop(), im->ended(&Impl::writing, "writer"));

  util::UniqueLock lk(im->mu);
  im->cv.wait(lk.native(), [&]() REQUIRES(im->mu) { return !im->reading && im->in_flight == 0; });
  lk.unlock();
  im->handler.close_session(session);
  session->set_sink(nullptr);
  lk.lock();
  im->closing = true;
  lk.unlock();
  im->wake.notify();
  lk.lock();
  im->cv.wait(lk.native(), [&]() REQUIRES(im->mu) { return !im->writing; });
  return {};
}

}  // namespace mcpgw::transport
