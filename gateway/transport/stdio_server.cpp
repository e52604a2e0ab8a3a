#include "transport/stdio_server.hpp"

#include "transport/line_buffer.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>

namespace mcpgw::transport {
namespace {

constexpr std::size_t kMaxLine = 64 * 1024 * 1024;

/// Serialises writes of whole lines to one fd.
struct LineWriter {
  int fd;
  std::mutex mu;
  bool write(std::string line) {
    line.push_back('\n');
    std::lock_guard lk(mu);
    std::string_view rest(line);
    while (!rest.empty()) {
      ssize_t n = ::write(fd, rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
};

/// Counts requests in flight so shutdown can wait for them.
struct InFlight {
  std::mutex mu;
  std::condition_variable cv;
  std::size_t n = 0;
  void add() {
    std::lock_guard lk(mu);
    ++n;
  }
  void done() {
    std::lock_guard lk(mu);
    if (--n == 0) cv.notify_all();
  }
  void wait_idle() {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return n == 0; });
  }
};

/// Collects the replies of one batch and writes them as one array.
struct Batch {
  LineWriter& out;
  std::mutex mu;
  std::vector<std::string> replies;
  std::size_t expected;
  Batch(LineWriter& o, std::size_t n) : out(o), expected(n) {}
  void add(std::string r) {
    std::string line;
    {
      std::lock_guard lk(mu);
      replies.push_back(std::move(r));
      if (replies.size() != expected) return;
      line.push_back('[');
      for (auto& x : replies) {
        if (line.size() > 1) line += ',';
        line += x;
      }
      line.push_back(']');
    }
    out.write(std::move(line));
  }
};

class StdioExchange final : public Exchange {
 public:
  StdioExchange(LineWriter& out, InFlight& inflight, std::shared_ptr<Batch> batch)
      : out_(out), inflight_(inflight), batch_(std::move(batch)) {
    inflight_.add();
  }
  void send(std::string msg) override { out_.write(std::move(msg)); }
  void reply(std::string response) override {
    if (batch_) batch_->add(std::move(response));
    else out_.write(std::move(response));
    inflight_.done();
  }

 private:
  LineWriter& out_;
  InFlight& inflight_;
  std::shared_ptr<Batch> batch_;
};

}  // namespace

StdioServer::StdioServer(Handler& handler, ClientContext ctx, int in_fd, int out_fd)
    : handler_(handler), ctx_(std::move(ctx)), in_(in_fd), out_(out_fd) {}

void StdioServer::stop() {
  if (wake_[1] >= 0) {
    [[maybe_unused]] ssize_t n = ::write(wake_[1], "x", 1);
  }
}

Result<void> StdioServer::run() {
  if (pipe2(wake_, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  LineWriter out{out_, {}};
  InFlight inflight;
  auto opened = handler_.open_session(ctx_);
  if (!opened) return Error{opened.error()};
  std::shared_ptr<Session> session = std::move(*opened);
  session->bind("", ctx_, [&out](std::string msg) { return out.write(std::move(msg)); });

  auto dispatch = [&](std::string_view line) {
    jsonrpc::Parsed parsed = jsonrpc::parse(line);
    std::size_t requests = parsed.errors.size();
    for (auto& m : parsed.messages) requests += m.is_request();
    std::shared_ptr<Batch> batch = parsed.batch && requests > 0 ? std::make_shared<Batch>(out, requests) : nullptr;
    for (auto& e : parsed.errors) batch ? batch->add(std::move(e)) : void(out.write(std::move(e)));
    for (auto& m : parsed.messages) {
      std::shared_ptr<Exchange> ex;
      if (m.is_request()) ex = std::make_shared<StdioExchange>(out, inflight, batch);
      handler_.handle(session, std::move(m), std::move(ex));
    }
  };

  LineBuffer lines(kMaxLine);
  char chunk[65536];
  for (;;) {
    pollfd fds[2] = {{in_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents) break;
    ssize_t n = ::read(in_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (!lines.feed(std::string_view(chunk, static_cast<std::size_t>(n)), dispatch))
      out.write(jsonrpc::make_error(json::Value(), jsonrpc::kInvalidRequest, "Invalid Request: line over 64 MiB"));
  }
  inflight.wait_idle();
  handler_.close_session(session);
  session->set_sink(nullptr);
  ::close(wake_[0]);
  ::close(wake_[1]);
  wake_[0] = wake_[1] = -1;
  return {};
}

}  // namespace mcpgw::transport
