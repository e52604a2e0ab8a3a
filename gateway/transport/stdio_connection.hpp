#pragma once
// Upstream over a child's stdio: newline-delimited JSON-RPC on stdin/stdout,
// stderr lines to our log under the server's name. The pipes to the child
// live on one worker at a time, their home: reading stdout, the write queue
// to stdin and the table of requests in flight with their deadlines all run
// there, on one strand. Every caller, on whatever thread, reaches it through
// one bounded hand-off, which one wake-up of the home drains whole.
//
// The pipes follow their callers: when the requests of several drains in a
// row come from one other worker and nothing is in flight, the home moves
// there (stdout's read is cancelled, both pipes leave this worker's epoll
// and join that one's). A client calling a stdio server from another
// worker would otherwise cross to the home and back on every call, two
// wake-ups of another thread that cost more than the rest of the call.
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <deque>
#include <vector>
#include <map>
#include <memory>
#include <optional>

#include "transport/child_process.hpp"
#include "transport/connection.hpp"
#include "transport/io.hpp"
#include "transport/line_buffer.hpp"
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
  /// The worker the pipes are on now (Io's numbering).
  int worker() const { return worker_.load(std::memory_order_relaxed); }

 private:
  /// A request waiting for its response. Its deadline is on the loop's
  /// one timer (util/deadline): a request answered in time costs no timer
  /// of its own and no trip around the loop to cancel one.
  struct Pending {
    Pending(ResponseHandler d, asio::any_io_executor strand) : done(std::move(d)), expiry(std::move(strand)) {}
    ResponseHandler done;
    Deadline expiry;
    CancelSignal::Subscription cancel;
    bool relay = false;  ///< RequestOptions::relay
  };
  /// What a caller hands to the home: a request, a line with no answer to
  /// wait for (a notification, a response), a request's cancellation, or
  /// the close. In order: the home takes them as they were handed.
  struct Handed {
    enum class Kind { Request, Line, Cancel, Close };
    explicit Handed(Kind k) : kind(k) {}
    Kind kind;
    std::string line;
    std::int64_t id = 0;  ///< Request, Cancel
    RequestOptions opts;
    ResponseHandler done;
    std::function<void()> closed;  ///< Close
    int worker = -1;               ///< the caller's worker (Request)
  };
  using Strand = asio::strand<asio::any_io_executor>;
  StdioConnection(Io& io, Strand strand, int worker, std::string name, std::shared_ptr<ChildProcess> child,
                  ConnectionHandlers h, std::size_t max_line);
  void begin();
  /// Queues `h` for the home from any thread; the first message queued
  /// since the last drain posts the drain. False, and `h` untouched, when
  /// the hand-off is full (never for a cancellation or the close).
  bool hand_off(Handed& h);
  /// Takes everything handed off so far and sends it as one write, or
  /// moves home first. On the home.
  void drain();
  /// The worker the pipes should move to before `batch` is taken: set when
  /// nothing is in flight and the requests of the last kMoveAfter drains
  /// came from that worker. On the home.
  std::optional<int> move_target(const std::vector<Handed>& batch);
  /// Starts the move to worker `w`: the batch goes back to the hand-off,
  /// which the new home drains first, and stdout's read is cancelled. On the home.
  void move_to(int w);
  /// The reader stopped for the move: the pipes leave this worker. On the old home.
  void leave();
  /// Takes the pipes' descriptors onto the home (stdin non-blocking).
  void adopt(int in, int out);
  /// The pipes join this worker; reading and the hand-off go on here.
  void arrive(Strand here, int worker, int in, int out);
  /// stdout broke while moving: the move is off, the hand-off drains here.
  void stay();
  /// Reads stdout until it ends or the pipes move.
  void read_stdout();
  /// Files request `h` in the table of requests in flight (its timer, its
  /// cancellation) and queues its line. On the home.
  void start_request(Handed h);
  /// Queues `line` for stdin; `id` is the request it carries, failed if
  /// the write fails. On the home; write() also starts the write.
  void enqueue(std::string line, std::optional<std::int64_t> id = std::nullopt);
  void write(std::string line, std::optional<std::int64_t> id = std::nullopt);
  /// Writes what is queued for stdin, at once where the pipe takes it, else
  /// when the child has read enough. On the home.
  void write_next();
  /// The queued lines as one batch of buffers.
  std::vector<asio::const_buffer> queued() const;
  /// Takes the first `n` bytes written off the queue; on `ec` (the pipe
  /// broke) fails every request still queued.
  void sent(std::size_t n, const boost::system::error_code& ec);
  /// Logs that a message was dropped: `messages` (`bytes`) wait for stdin already.
  void warn_full(std::size_t messages, std::size_t bytes) const;
  void on_line(std::string_view line);
  void on_oversized(std::string_view head, std::string_view tail, std::size_t size);
  /// Ends request `id` with `r` (and tells the server, unless it answered). On the home.
  void finish(std::int64_t id, Response r, bool tell_server);
  void stdout_ended(const std::string& why);
  void fail_all(const std::string& reason);
  void close_here(std::function<void()> done);

  Io& io_;
  std::string name_;
  std::shared_ptr<ChildProcess> child_;
  ConnectionHandlers handlers_;
  std::size_t max_line_;
  std::atomic<std::int64_t> next_id_{1};
  std::atomic<bool> closed_{false};
  std::atomic<int> worker_;  ///< the home's worker; changed under hand_off_mu_, on the home
  util::Mutex hand_off_mu_;
  Strand home_ GUARDED_BY(hand_off_mu_);  ///< where drains are posted
  std::vector<Handed> handed_ GUARDED_BY(hand_off_mu_);
  std::size_t handed_bytes_ GUARDED_BY(hand_off_mu_) = 0;
  /// A drain is posted, or a move is under way (whose arrival drains).
  bool drain_posted_ GUARDED_BY(hand_off_mu_) = false;
  // Touched on the home only (a move hands them over through a post).
  Strand strand_;  ///< the home
  int here_;       ///< its worker
  std::optional<asio::posix::stream_descriptor> in_, out_;
  SkippingLineBuffer lines_;
  std::vector<Handed> draining_;  ///< handed_'s storage, swapped in turn
  std::map<std::int64_t, Pending> pending_;
  std::deque<std::pair<std::string, std::optional<std::int64_t>>> outbox_;
  std::size_t queued_bytes_ = 0;  ///< in outbox_
  bool writing_ = false;
  bool reading_ = true;              ///< stdout has not ended
  std::optional<Strand> moving_to_;  ///< a move is under way
  int streak_worker_ = -1;           ///< the other worker the last drains' requests came from, or -1
  int streak_ = 0;                   ///< drains in a row whose requests all came from it
  std::string close_reason_;
};

}  // namespace mcpgw::transport
