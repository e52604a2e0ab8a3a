#include "transport/stdio_connection.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <charconv>

namespace mcpgw::transport {
namespace {

using namespace std::chrono_literals;
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
/// Bytes queued for stdin, at most: a child that stops reading must not
/// make us buffer without bound, while thousands of calls at once (a
/// child slow to read, not stuck) all fit.
constexpr std::size_t kMaxQueuedBytes = 16 << 20;
/// Drains in a row whose requests all came from one other worker before the
/// pipes move there: enough that two clients on different workers taking
/// turns do not toss them back and forth, few enough that one client's
/// calls stop crossing after its first handful.
constexpr int kMoveAfter = 8;

std::optional<std::int64_t> parse_int(std::string_view s) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  return v;
}

/// The id of a response that ends in `"id":N}`, as serializers that put the
/// result first write it.
std::optional<std::int64_t> id_in_tail(std::string_view tail) {
  std::size_t end = tail.find_last_not_of(" \t\r");
  if (end == std::string_view::npos || tail[end] != '}') return std::nullopt;
  std::size_t digits_end = tail.find_last_not_of(" \t\r", end - 1);
  if (digits_end == std::string_view::npos) return std::nullopt;
  std::size_t digits = tail.find_last_not_of("0123456789", digits_end);
  if (digits == std::string_view::npos || digits == digits_end) return std::nullopt;
  std::size_t start = tail[digits] == '-' ? digits : digits + 1;
  std::size_t colon = tail.find_last_not_of(" \t\r", start - 1);
  if (colon == std::string_view::npos || tail[colon] != ':' || colon < 4) return std::nullopt;
  std::size_t quote = tail.find_last_not_of(" \t\r", colon - 1);
  if (quote == std::string_view::npos || quote < 3 || tail.substr(quote - 3, 4) != "\"id\"") return std::nullopt;
  return parse_int(tail.substr(start, digits_end + 1 - start));
}

}  // namespace

Result<std::shared_ptr<StdioConnection>> StdioConnection::start(Io& io, std::string name, const ChildSpec& spec,
                                                                ConnectionHandlers handlers, std::size_t max_line) {
  asio::io_context& ctx = io.context();
  Strand strand = asio::make_strand(ctx.get_executor());
  auto child = ChildProcess::spawn(strand, spec);
  if (!child) return Error{child.error()};
  // Private constructor, so make_shared cannot reach it.
  std::shared_ptr<StdioConnection> c(new StdioConnection(io, strand, io.index_of(ctx), std::move(name),
                                                         std::move(*child), std::move(handlers), max_line));
  c->begin();
  return c;
}

StdioConnection::StdioConnection(Io& io, Strand strand, int worker, std::string name,
                                 std::shared_ptr<ChildProcess> child, ConnectionHandlers h, std::size_t max_line)
    : io_(io),
      name_(std::move(name)),
      child_(std::move(child)),
      handlers_(std::move(h)),
      max_line_(max_line),
      worker_(worker),
      home_(strand),
      strand_(std::move(strand)),
      here_(worker),
      lines_(max_line) {
  auto [in, out] = child_->release_stdio();
  adopt(in, out);
}

void StdioConnection::adopt(int in, int out) {
  in_.emplace(strand_, in);
  out_.emplace(strand_, out);
  // Writes to stdin are tried at once and wait only when the pipe is full.
  boost::system::error_code ignored;
  in_->non_blocking(true, ignored);
}

StdioConnection::~StdioConnection() {
  // The readers hold this object, so it goes only once both pipes closed;
  // the child may still run (it closed them itself). Its stdin closes
  // first, so that it sees the end of its input before TERM.
  boost::system::error_code ignored;
  if (in_) in_->close(ignored);
  child_->stop(2000ms);
}

void StdioConnection::begin() {
  read_stdout();
  // stderr stays where the child started: it is only logged.
  asio::co_spawn(strand_, [self = shared_from_this()]() -> Task<void> {
    SkippingLineBuffer lines(self->max_line_);
    std::vector<char> buf(16 * 1024);
    for (;;) {
      auto [ec, n] = co_await self->child_->err().async_read_some(asio::buffer(buf), kAwait);
      if (ec) co_return;
      lines.feed(
          std::string_view(buf.data(), n),
          [&](std::string_view l) { spdlog::info("upstream {} stderr: {}", self->name_, l); },
          [&](std::string_view head, std::string_view, std::size_t size) {
            const auto& mask = self->handlers_.log_text;
            spdlog::info("upstream {} stderr: {:.200}... ({} bytes, cut)", self->name_,
                         mask ? mask(head) : std::string(head), size);
          });
    }
  }, asio::detached);
}

void StdioConnection::read_stdout() {
  asio::co_spawn(strand_, [self = shared_from_this()]() -> Task<void> {
    std::vector<char> buf(64 * 1024);
    for (;;) {
      auto [ec, n] = co_await self->out_->async_read_some(asio::buffer(buf), kAwait);
      if (!ec) {
        try {
          self->lines_.feed(
              std::string_view(buf.data(), n), [&](std::string_view l) { self->on_line(l); },
              [&](std::string_view head, std::string_view tail, std::size_t size) {
                self->on_oversized(head, tail, size);
              });
        } catch (const std::exception& e) {
          // Whatever a message made throw, the reader goes on: a lost reader
          // would leave every later call to time out.
          spdlog::error("upstream {}: handling its output failed: {}", self->name_, e.what());
        }
        if (!self->moving_to_) continue;
      }
      if (self->moving_to_ && (!ec || ec == asio::error::operation_aborted)) {
        self->leave();
        co_return;
      }
      if (self->moving_to_) self->stay();
      self->stdout_ended(ec == asio::error::eof ? "closed its stdout" : "stdout read failed: " + ec.message());
      co_return;
    }
  }, asio::detached);
}

void StdioConnection::async_request(std::string_view method, const json::Value* params, RequestOptions opts,
                                    ResponseHandler done) {
  std::int64_t id = next_id_.fetch_add(1);
  Handed h(Handed::Kind::Request);
  h.line = jsonrpc::make_request(id, method, params, raw_arguments_of(opts));
  h.id = id;
  h.opts = std::move(opts);
  h.done = std::move(done);
  h.worker = io_.current();
  if (hand_off(h)) return;
  // Failed through the loop, as an answer would be: never inside the caller's frame.
  asio::post(io_.executor(), [done = std::move(h.done)] {
    done({std::nullopt, Failure::Transport, "is not reading its stdin (write queue full)"});
  });
}

bool StdioConnection::notify(std::string_view method, const json::Value* params) {
  return respond(jsonrpc::make_notification(method, params));
}

bool StdioConnection::respond(std::string message) {
  if (closed_.load()) return false;
  Handed h(Handed::Kind::Line);
  h.line = std::move(message);
  hand_off(h);
  return true;
}

bool StdioConnection::hand_off(Handed& h) {
  std::optional<Strand> post;
  std::optional<std::pair<std::size_t, std::size_t>> full;  // messages, bytes handed off
  {
    util::MutexLock lk(hand_off_mu_);
    // The same bound as the queue for stdin: a child that stops reading
    // must not make callers on other threads buffer without bound either.
    if (handed_bytes_ + h.line.size() > kMaxQueuedBytes) {
      full = {handed_.size(), handed_bytes_};
    } else {
      handed_bytes_ += h.line.size();
      handed_.push_back(std::move(h));
      if (!std::exchange(drain_posted_, true)) post = home_;
    }
  }
  if (full) {
    // Whichever bound a child that stopped reading meets first, the
    // operator sees the same line.
    warn_full(full->first, full->second);
    return false;
  }
  // Calls from other workers that gather while the home is busy cost one
  // wake-up between them, not one each.
  if (post) asio::post(*post, [self = shared_from_this()] { self->drain(); });
  return true;
}

void StdioConnection::drain() {
  {
    util::MutexLock lk(hand_off_mu_);
    draining_.swap(handed_);
    handed_bytes_ = 0;
    drain_posted_ = false;
  }
  if (auto w = move_target(draining_)) return move_to(*w);
  for (auto& h : draining_) {
    switch (h.kind) {
      case Handed::Kind::Request: start_request(std::move(h)); break;
      case Handed::Kind::Line: enqueue(std::move(h.line)); break;
      case Handed::Kind::Cancel: finish(h.id, {std::nullopt, Failure::Cancelled, "cancelled"}, true); break;
      case Handed::Kind::Close: close_here(std::move(h.closed)); break;
    }
  }
  draining_.clear();
  if (!writing_) write_next();
}

std::optional<int> StdioConnection::move_target(const std::vector<Handed>& batch) {
  // The one other worker every request of this batch came from, or -1
  // (some came from here, from off the loop, or from several workers).
  std::optional<int> from;
  bool closing = false;
  for (const auto& h : batch) {
    closing |= h.kind == Handed::Kind::Close;
    if (h.kind != Handed::Kind::Request) continue;
    from = (h.worker == here_ || (from && *from != h.worker)) ? -1 : h.worker;
  }
  if (from) {
    streak_ = *from < 0 ? 0 : *from == streak_worker_ ? streak_ + 1 : 1;
    streak_worker_ = *from;
  }
  const bool idle = pending_.empty() && outbox_.empty() && !writing_;
  if (closing || !idle || !reading_ || closed_.load() || streak_ < kMoveAfter) return std::nullopt;
  return streak_worker_;
}

void StdioConnection::move_to(int w) {
  Strand to = asio::make_strand(io_.worker(static_cast<unsigned>(w)).get_executor());
  {
    util::MutexLock lk(hand_off_mu_);
    // Back in front of what was handed since: the new home's first drain
    // takes them in order. Until then nothing posts a drain.
    for (const auto& h : draining_) handed_bytes_ += h.line.size();
    handed_.insert(handed_.begin(), std::make_move_iterator(draining_.begin()),
                   std::make_move_iterator(draining_.end()));
    drain_posted_ = true;
    home_ = to;
    worker_.store(w, std::memory_order_relaxed);
  }
  draining_.clear();
  streak_worker_ = -1;
  streak_ = 0;
  moving_to_ = std::move(to);
  boost::system::error_code ignored;
  out_->cancel(ignored);
}

void StdioConnection::leave() {
  const int in = in_->release(), out = out_->release();
  in_.reset();
  out_.reset();
  Strand to = std::move(*moving_to_);
  moving_to_.reset();
  asio::post(to, [self = shared_from_this(), to, w = worker(), in, out] { self->arrive(to, w, in, out); });
}

void StdioConnection::arrive(Strand here, int worker, int in, int out) {
  strand_ = std::move(here);
  here_ = worker;
  adopt(in, out);
  read_stdout();
  drain();
}

void StdioConnection::stay() {
  moving_to_.reset();
  {
    util::MutexLock lk(hand_off_mu_);
    home_ = strand_;
    worker_.store(here_, std::memory_order_relaxed);
  }
  asio::post(strand_, [self = shared_from_this()] { self->drain(); });
}

void StdioConnection::start_request(Handed h) {
  if (closed_.load()) {
    h.done({std::nullopt, Failure::Closed, close_reason_.empty() ? "not running" : close_reason_});
    return;
  }
  const std::int64_t id = h.id;
  Pending& p = pending_.try_emplace(id, std::move(h.done), strand_).first->second;
  p.relay = h.opts.relay;
  // Held by the deadline until the request ends (finish() erases it), so
  // the connection outlives every deadline it armed.
  if (h.opts.deadline != std::chrono::steady_clock::time_point::max())
    p.expiry.arm(h.opts.deadline, [self = shared_from_this(), id] {
      self->finish(id, {std::nullopt, Failure::Timeout, "timed out"}, true);
    });
  // Through the hand-off, like everything from other threads: it reaches
  // the home in order, wherever that is by then.
  if (h.opts.cancel)
    p.cancel = h.opts.cancel->on_cancel([self = shared_from_this(), id] {
      Handed c(Handed::Kind::Cancel);
      c.id = id;
      self->hand_off(c);
    });
  enqueue(std::move(h.line), id);
}

void StdioConnection::write(std::string line, std::optional<std::int64_t> id) {
  enqueue(std::move(line), id);
  if (!writing_) write_next();
}

void StdioConnection::enqueue(std::string line, std::optional<std::int64_t> id) {
  if (queued_bytes_ + line.size() + 1 > kMaxQueuedBytes) {
    warn_full(outbox_.size(), queued_bytes_);
    if (id) finish(*id, {std::nullopt, Failure::Transport, "is not reading its stdin (write queue full)"}, false);
    return;
  }
  line.push_back('\n');
  queued_bytes_ += line.size();
  outbox_.emplace_back(std::move(line), id);
}

void StdioConnection::warn_full(std::size_t messages, std::size_t bytes) const {
  spdlog::warn("upstream {}: {} messages ({} bytes) wait for its stdin already; dropping one", name_, messages, bytes);
}

void StdioConnection::write_next() {
  if (outbox_.empty()) {
    writing_ = false;
    return;
  }
  writing_ = true;
  // Everything queued goes out in one write: thousands of calls at once
  // drain in a few system calls instead of one loop turn each. It nearly
  // always fits in the pipe and is written here, at once, with no
  // completion to run through the loop; what does not fit waits for the
  // child to read.
  // (A descriptor that could not be made non-blocking is only written
  // through the loop: a write here must never block it.)
  if (in_->non_blocking()) {
    boost::system::error_code ec;
    const std::size_t n = asio::write(*in_, queued(), ec);
    if (ec != asio::error::would_block) {
      sent(n, ec);
      write_next();
      return;
    }
    sent(n, {});
  }
  asio::async_write(*in_, queued(),
                    asio::bind_executor(strand_, [self = shared_from_this()](const boost::system::error_code& ec,
                                                                             std::size_t n) {
                      self->sent(n, ec);
                      self->write_next();
                    }));
}

std::vector<asio::const_buffer> StdioConnection::queued() const {
  std::vector<asio::const_buffer> batch;
  batch.reserve(outbox_.size());
  for (const auto& [line, id] : outbox_) batch.emplace_back(asio::buffer(line));
  return batch;
}

void StdioConnection::sent(std::size_t n, const boost::system::error_code& ec) {
  while (n > 0 && !outbox_.empty()) {
    std::string& line = outbox_.front().first;
    const std::size_t part = std::min(n, line.size());
    queued_bytes_ -= part;
    n -= part;
    if (part < line.size()) line.erase(0, part);
    else outbox_.pop_front();
  }
  if (!ec) return;
  // The pipe broke: nothing queued will reach the child.
  while (!outbox_.empty()) {
    auto id = outbox_.front().second;
    queued_bytes_ -= outbox_.front().first.size();
    outbox_.pop_front();
    if (id) finish(*id, {std::nullopt, Failure::Closed, "cannot write to its stdin: " + ec.message()}, false);
  }
}

void StdioConnection::finish(std::int64_t id, Response r, bool tell_server) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;  // answered, timed out or cancelled already
  ResponseHandler done = std::move(it->second.done);
  // Disarms its deadline and drops its cancel subscription.
  pending_.erase(it);
  if (tell_server && !closed_.load()) {
    json::Document n(rapidjson::kObjectType);
    n.AddMember("requestId", id, n.GetAllocator());
    n.AddMember("reason", json::ref(r.failure == Failure::Timeout ? "timeout" : "cancelled by client"),
                n.GetAllocator());
    write(jsonrpc::make_notification("notifications/cancelled", &n));
  }
  done(std::move(r));
}

void StdioConnection::on_line(std::string_view line) {
  // The answer to a request that relays its result keeps it as bytes.
  if (auto id = jsonrpc::answer_id_in(line)) {
    if (auto it = pending_.find(*id); it != pending_.end() && it->second.relay)
      if (auto m = jsonrpc::Message::relayed(line, [this](std::size_t n) { return io_.buffers().take(n); })) {
        finish(*id, {std::move(*m), Failure::Transport, {}}, false);
        return;
      }
  }
  auto read = jsonrpc::read(line);
  if (auto* bad = std::get_if<jsonrpc::Unreadable>(&read)) {
    // An answer naming a call in flight fails that call now: its caller
    // would otherwise wait out the whole timeout for an answer that came.
    if (bad->answers && pending_.count(*bad->answers)) {
      spdlog::warn("upstream {}: malformed answer to request {} ({}): {:.200}", name_, *bad->answers, bad->why, line);
      finish(*bad->answers, {std::nullopt, Failure::Transport, "sent a malformed answer: " + bad->why}, false);
    } else {
      spdlog::warn("upstream {}: ignoring a malformed message ({}): {:.200}", name_, bad->why, line);
    }
    return;
  }
  auto& msg = std::get<jsonrpc::Message>(read);
  if (msg.is_response()) {
    auto id = msg.id().int64();
    if (!id) {
      spdlog::warn("upstream {}: response with an id we never sent: {:.200}", name_, line);
      return;
    }
    finish(*id, {std::move(msg), Failure::Transport, {}}, false);
    return;
  }
  if (handlers_.on_message && !closed_.load()) handlers_.on_message(msg);
}

void StdioConnection::on_oversized(std::string_view head, std::string_view tail, std::size_t size) {
  std::string what = "sent a message of " + std::to_string(size) + " bytes, over its max_response_bytes (" +
                     std::to_string(max_line_) + ")";
  auto id = jsonrpc::answer_id_in(head);
  if (!id) id = id_in_tail(tail);
  spdlog::warn("upstream {}: {}; discarded{}", name_, what, id ? " (the answer to request " + std::to_string(*id) + ")" : "");
  if (id) finish(*id, {std::nullopt, Failure::TooLarge, what}, false);
}

void StdioConnection::stdout_ended(const std::string& why) {
  reading_ = false;
  // The exit status, when the child exits soon after, makes the reason clear.
  auto timer = std::make_shared<asio::steady_timer>(strand_, 500ms);
  auto reported = std::make_shared<bool>(false);
  auto report = [self = shared_from_this(), why, reported](const std::optional<std::string>& status) {
    if (*reported) return;
    *reported = true;
    std::string reason = "process " + why + (status ? " (" + *status + ")" : "");
    bool was_closed = self->closed_.exchange(true);
    self->fail_all(reason);
    if (!was_closed && self->handlers_.on_close) self->handlers_.on_close(reason);
  };
  timer->async_wait([report, timer](const boost::system::error_code&) { report(std::nullopt); });
  child_->on_exit([report, timer, strand = strand_](const std::string& status) {
    asio::post(strand, [report, timer, status] {
      report(status);
      timer->cancel();
    });
  });
}

void StdioConnection::fail_all(const std::string& reason) {
  if (close_reason_.empty()) close_reason_ = reason;
  while (!pending_.empty()) finish(pending_.begin()->first, {std::nullopt, Failure::Closed, close_reason_}, false);
}

void StdioConnection::async_close(std::function<void()> done) {
  Handed h(Handed::Kind::Close);
  h.closed = std::move(done);
  hand_off(h);
}

void StdioConnection::close_here(std::function<void()> done) {
  closed_.store(true);
  fail_all("connection closed");
  // The end of its input first, then TERM.
  boost::system::error_code ignored;
  in_->close(ignored);
  child_->stop(2000ms);
  child_->on_exit([done = std::move(done)](const std::string&) {
    if (done) done();
  });
}

}  // namespace mcpgw::transport
