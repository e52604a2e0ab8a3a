#include "transport/stdio_connection.hpp"

#include "transport/line_buffer.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>

namespace mcpgw::transport {
namespace {

// A line longer than this is not a message we can use; the connection is
// dropped rather than growing without bound.
constexpr std::size_t kMaxLine = 64 * 1024 * 1024;

/// Calls `on_line` for each line read from `fd` until EOF; returns why it stopped.
template <typename F>
std::string read_lines(int fd, F&& on_line) {
  LineBuffer lines(kMaxLine);
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n == 0 ? "closed its stdout" : std::string("read failed: ") + std::strerror(errno);
    if (!lines.feed(std::string_view(chunk, static_cast<std::size_t>(n)), on_line)) return "sent a line over 64 MiB";
  }
}

}  // namespace

Result<std::unique_ptr<StdioConnection>> StdioConnection::start(std::string name, const ChildSpec& spec,
                                                                ConnectionHandlers handlers) {
  auto child = ChildProcess::spawn(spec);
  if (!child) return Error{child.error()};
  // Private constructor, so make_unique cannot reach it.
  std::unique_ptr<StdioConnection> c(new StdioConnection(std::move(name), std::move(*child), std::move(handlers)));
  c->out_thread_ = std::thread([p = c.get()] { p->read_stdout(); });
  c->err_thread_ = std::thread([p = c.get()] { p->read_stderr(); });
  return c;
}

StdioConnection::StdioConnection(std::string name, std::unique_ptr<ChildProcess> child, ConnectionHandlers h)
    : name_(std::move(name)), child_(std::move(child)), handlers_(std::move(h)) {}

StdioConnection::~StdioConnection() { close(); }

void StdioConnection::close() {
  closed_.store(true);
  if (child_) child_->stop(std::chrono::milliseconds(2000));
  if (out_thread_.joinable()) out_thread_.join();
  if (err_thread_.joinable()) err_thread_.join();
  fail_all("connection closed");
}

bool StdioConnection::write_line(std::string line) {
  line.push_back('\n');
  std::lock_guard lk(write_mu_);
  return !closed_.load() && child_->write_all(line);
}

Response StdioConnection::request(std::string_view method, const json::Value* params,
                                  const RequestOptions& opts) {
  std::int64_t id = next_id_.fetch_add(1);
  auto slot = std::make_shared<Slot>();
  {
    std::lock_guard lk(mu_);
    if (closed_.load()) return {std::nullopt, Failure::Closed, close_reason_.empty() ? "not running" : close_reason_};
    pending_.emplace(id, slot);
  }
  if (!write_line(jsonrpc::make_request(id, method, params))) {
    std::lock_guard lk(mu_);
    pending_.erase(id);
    return {std::nullopt, Failure::Closed, close_reason_.empty() ? "stdin is closed" : close_reason_};
  }
  auto gone = [&] { return opts.cancel && opts.cancel->cancelled(); };
  CancelSignal::Subscription wake;
  if (opts.cancel)
    wake = opts.cancel->on_cancel([this, slot] {
      std::lock_guard lk(mu_);
      slot->cv.notify_all();
    });
  std::unique_lock lk(mu_);
  slot->cv.wait_until(lk, opts.deadline, [&] { return slot->msg.has_value() || !pending_.count(id) || gone(); });
  if (slot->msg) return {std::move(slot->msg), Failure::Transport, {}};
  if (!pending_.count(id)) return {std::nullopt, Failure::Closed, close_reason_};
  pending_.erase(id);
  lk.unlock();
  bool cancelled = gone();
  json::Document p(rapidjson::kObjectType);
  p.AddMember("requestId", id, p.GetAllocator());
  p.AddMember("reason", json::ref(cancelled ? "cancelled by client" : "timeout"), p.GetAllocator());
  notify("notifications/cancelled", &p);
  return {std::nullopt, cancelled ? Failure::Cancelled : Failure::Timeout, cancelled ? "cancelled" : "timed out"};
}

bool StdioConnection::notify(std::string_view method, const json::Value* params) {
  return write_line(jsonrpc::make_notification(method, params));
}

bool StdioConnection::respond(std::string message) { return write_line(std::move(message)); }

void StdioConnection::read_stdout() {
  std::string why = read_lines(child_->stdout_fd(), [&](std::string_view line) {
    auto doc = json::parse(line);
    if (!doc) {
      spdlog::warn("upstream {}: ignoring a stdout line that is not JSON ({}): {:.200}", name_, doc.error(), line);
      return;
    }
    auto msg = jsonrpc::Message::from(std::move(*doc));
    if (!msg) {
      spdlog::warn("upstream {}: ignoring an invalid JSON-RPC message ({}): {:.200}", name_, msg.error(), line);
      return;
    }
    if (msg->is_response()) {
      const auto& id = msg->id();
      if (!id.IsInt64()) {
        spdlog::warn("upstream {}: response with an id we never sent: {:.200}", name_, line);
        return;
      }
      std::lock_guard lk(mu_);
      auto it = pending_.find(id.GetInt64());
      if (it == pending_.end()) return;  // timed out or cancelled already
      it->second->msg = std::move(*msg);
      it->second->cv.notify_one();
      pending_.erase(it);
      return;
    }
    if (handlers_.on_message) handlers_.on_message(*msg);
  });
  std::string status;
  if (auto s = child_->wait_exit(std::chrono::milliseconds(500))) status = " (" + *s + ")";
  std::string reason = "process " + why + status;
  bool was_closed = closed_.exchange(true);
  fail_all(reason);
  if (!was_closed && handlers_.on_close) handlers_.on_close(reason);
}

void StdioConnection::read_stderr() {
  read_lines(child_->stderr_fd(), [&](std::string_view line) {
    spdlog::info("upstream {} stderr: {}", name_, line);
  });
}

void StdioConnection::fail_all(const std::string& reason) {
  std::lock_guard lk(mu_);
  if (close_reason_.empty()) close_reason_ = reason;
  for (auto& [id, slot] : pending_) slot->cv.notify_one();
  pending_.clear();
}

}  // namespace mcpgw::transport
