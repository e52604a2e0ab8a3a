#pragma once
// Upstream over a child's stdio: newline-delimited JSON-RPC on stdin/stdout,
// stderr lines to our log under the server's name. Everything runs on one
// strand of the I/O loop: reading both pipes, the write queue to stdin, the
// table of requests in flight and their timers. Other threads reach it
// through one bounded hand-off, which one wake-up of the strand drains
// whole.
#include <boost/asio/strand.hpp>

#include <atomic>
#include <deque>
#include <vector>
#include <map>
#include <memory>

#include "transport/child_process.hpp"
#include "transport/connection.hpp"
#include "transport/io.hpp"
#include "util/deadline.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport {

/// One MCP session with a child process speaking over its stdio.
class StdioConnection final : public Connection, public std::enable_shared_from_this<StdioConnection> {
 public:
  /// Spawns the child and starts reading. `name` labels log lines and
  /// errors; a line longer than `max_line` is discarded (the request it
  /// answers fails, naming the limit).
  static Result<std::shared_ptr<StdioConnection>> start(Io& io, std::string name, const ChildSpec& spec,
                                                        ConnectionHandlers handlers,
                                                        std::size_t max_line = 64 * 1024 * 1024);
  ~StdioConnection() override;

  void async_request(std::string_view method, const json::Value* params, RequestOptions opts,
                     ResponseHandler done) override;
  bool notify(std::string_view method, const json::Value* params) override;
  bool respond(std::string message) override;
  void set_protocol_version(std::string) override {}
  void async_close(std::function<void()> done) override;
  bool alive() const override { return !closed_.load(); }
  pid_t pid() const { return child_->pid(); }

 private:
  /// A request waiting for its response. Its deadline is on the loop's
  /// one timer (util/deadline): a request answered in time costs no timer
  /// of its own and no trip around the loop to cancel one.
  struct Pending {
    Pending(ResponseHandler d, asio::any_io_executor strand) : done(std::move(d)), expiry(std::move(strand)) {}
    ResponseHandler done;
    Deadline expiry;
    CancelSignal::Subscription cancel;
  };
  /// A message handed to the strand: a request (with `done`) or a line
  /// with no answer to wait for (a notification, a response).
  struct Handed {
    std::string line;
    std::optional<std::int64_t> id;
    RequestOptions opts;
    ResponseHandler done;
  };
  using Strand = asio::strand<asio::any_io_executor>;
  StdioConnection(Strand strand, std::string name, std::shared_ptr<ChildProcess> child,
                  ConnectionHandlers h, std::size_t max_line);
  void begin();
  /// Queues `h` for the strand from any thread; the first message queued
  /// since the last drain posts the drain. False, and `h` untouched, when
  /// the hand-off is full.
  bool hand_off(Handed& h);
  /// Takes everything handed off so far and sends it as one write. On the strand.
  void drain();
  /// Files request `h` in the table of requests in flight (its timer, its
  /// cancellation) and queues its line. On the strand.
  void start_request(Handed h);
  /// Queues `line` for stdin; `id` is the request it carries, failed if
  /// the write fails. On the strand; write() also starts the write.
  void enqueue(std::string line, std::optional<std::int64_t> id = std::nullopt);
  void write(std::string line, std::optional<std::int64_t> id = std::nullopt);
  void write_next();
  void on_line(std::string_view line);
  void on_oversized(std::string_view head, std::string_view tail, std::size_t size);
  /// Ends request `id` with `r` (and tells the server, unless it answered). On the strand.
  void finish(std::int64_t id, Response r, bool tell_server);
  void stdout_ended(const std::string& why);
  void fail_all(const std::string& reason);

  Strand strand_;
  std::string name_;
  std::shared_ptr<ChildProcess> child_;
  ConnectionHandlers handlers_;
  std::size_t max_line_;
  std::atomic<std::int64_t> next_id_{1};
  std::atomic<bool> closed_{false};
  util::Mutex hand_off_mu_;
  std::vector<Handed> handed_ GUARDED_BY(hand_off_mu_);
  std::size_t handed_bytes_ GUARDED_BY(hand_off_mu_) = 0;
  bool drain_posted_ GUARDED_BY(hand_off_mu_) = false;
  std::vector<Handed> draining_;       ///< on the strand: handed_'s storage, swapped in turn
  // Touched on the strand only.
  std::map<std::int64_t, Pending> pending_;
  std::deque<std::pair<std::string, std::optional<std::int64_t>>> outbox_;
  std::size_t queued_bytes_ = 0;  ///< in outbox_
  bool writing_ = false;
  std::string close_reason_;
};

}  // namespace mcpgw::transport
