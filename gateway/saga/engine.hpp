#pragma once
// The suspend/resume engine shared by MRTR (the 2026-07-28 `input_required`
// round trips) and sagas (tools/callSaga, tools/resumeSaga). A call whose
// upstream asks its client something mid-way is *parked*: its work keeps
// waiting in the upstream's request, its questions go to the client in
// whatever form the client speaks (the server's business), and the client's
// next request brings the answers and resumes it. A continuation that lands
// where the call is not parked (another process, a restart) replays the call
// with the answers known so far.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "upstream/origin.hpp"
#include "util/result.hpp"
#include "util/event.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::saga {

using Clock = std::chrono::steady_clock;

/// A question an upstream asked a suspended call's client.
struct Question {
  std::string key;     ///< the inputRequests key (MRTR) or stepId (saga)
  std::string method;  ///< elicitation/create, sampling/createMessage, roots/list
  json::Document params;
};

/// The questions of one suspendable call and the answers given to it. The
/// call's work asks (its coroutine suspended, as an upstream's
/// server-to-client request is); each request that continues the call
/// collects the pending questions and hands in their answers.
class Inbox {
 public:
  /// Answers known before they are asked, by key: a continuation that
  /// reaches a process where the call is not parked replays it with them.
  void preload(const json::Value& answers);
  /// Asks `method` under `key`, as one of `batch` questions the upstream
  /// sends at once (handed out together, by `order`: where the upstream
  /// sent it, 0 = unknown), and waits for the answer until `deadline`,
  /// `cancel` or abandon(). A preloaded answer returns at once.
  Task<upstream::Reply> ask(std::string_view method, json::Document params, std::string key, std::size_t batch,
                            std::uint64_t order, Clock::time_point deadline, CancelSignal& cancel);
  /// Waits until `finished()`, `cancel`, or a whole batch of questions is
  /// pending; returns the pending questions (none in the first two cases).
  Task<std::vector<Question>> wait(std::function<bool()> finished, CancelSignal& cancel);
  /// Wakes wait() (the work finished).
  void wake();
  /// Answers the pending questions found in `answers` (by key); returns the
  /// keys of those still unanswered.
  std::vector<std::string> answer(const json::Value& answers);
  /// Every answer given so far, by key (for the next token).
  json::Document answers() const;
  /// The questions waiting for an answer now, in the order they were asked
  /// (a task's `inputRequests`).
  std::vector<Question> pending() const;
  /// Calls `fn` (no lock held) whenever a question is asked or answered.
  void watch(std::function<void()> fn);
  /// No continuation will come: every question waiting gets an error.
  void abandon();

 private:
  struct Pending {
    /// Under the Inbox's mu_ (the asker and answer() share it); not
    /// GUARDED_BY, which cannot name a lock of another class.
    std::optional<upstream::Reply> answer;
  };
  struct Asked {
    Question q;
    std::shared_ptr<Pending> pending;
    std::uint64_t order = 0;
  };
  mutable util::Mutex mu_;
  Event changed_;  // a lock of its own
  bool gone_ GUARDED_BY(mu_) = false;
  std::vector<Asked> asked_ GUARDED_BY(mu_);  ///< unanswered questions
  std::size_t batch_ GUARDED_BY(mu_) = 1;
  json::Document preloaded_ GUARDED_BY(mu_){rapidjson::kObjectType};
  json::Document given_ GUARDED_BY(mu_){rapidjson::kObjectType};
  std::function<void()> watcher_ GUARDED_BY(mu_);
  void changed() EXCLUDES(mu_);
};

/// A call the engine drives: between the requests that continue it, it is
/// parked under its id.
struct Parked {
  std::string id;
  std::shared_ptr<Inbox> inbox;
  /// The server's way back to the client of the request now driving the
  /// call (what the work was started with), reattached by each continuation.
  std::shared_ptr<upstream::ClientChannel> client;
  CancelSignal cancel;  ///< cancels the work
  std::atomic<bool> done{false};
  upstream::Reply result;  ///< valid once `done` (written before it is set)
  /// Set by Engine::park() before the call is listed, then read under the
  /// engine's lock.
  Clock::time_point expires;
};

/// Runs suspendable calls as coroutines of their own (they outlive the
/// request that starts them), keeps the parked ones (bounded, expiring) and
/// the replay guard of saga tokens.
class Engine {
 public:
  /// Calls parked at once, at most (each holds an upstream request open).
  static constexpr std::size_t kMaxParked = 256;
  /// The work of a call, given the signal that cancels it.
  using Work = std::function<Task<upstream::Reply>(CancelSignal&)>;
  /// What driving a call came to: its final reply, or the questions its
  /// client must answer first.
  using Outcome = std::variant<upstream::Reply, std::vector<Question>>;

  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Starts `work` on `ex` for a new call (or a replay) asking through
  /// `inbox`; null once the engine is shutting down.
  std::shared_ptr<Parked> start(const asio::any_io_executor& ex, std::shared_ptr<Inbox> inbox,
                                std::shared_ptr<upstream::ClientChannel> client, Work work);
  /// Waits until `p` ends, asks a batch of questions, or `request` (the
  /// request driving it) is cancelled; the questions asked, if any.
  Task<std::vector<Question>> wait(std::shared_ptr<Parked> p, CancelSignal& request);
  /// What wait() came to, once the server has detached its client: the
  /// result, an error for a cancelled request (the call is abandoned), or
  /// `questions`.
  Outcome conclude(Parked& p, bool request_cancelled, std::vector<Question> questions);
  /// The parked call a token's state names (`state.park`), taken out of the
  /// registry; null when this process has none (another process, a
  /// restart, expiry).
  std::shared_ptr<Parked> take(const json::Value& state);
  /// Keeps `p` until taken or `ttl`; an error (and `p` abandoned) when
  /// kMaxParked calls are parked already.
  Result<void> park(const std::shared_ptr<Parked>& p, std::chrono::seconds ttl);
  /// Gives up `p` (a token for it could not be issued).
  static void abandon(Parked& p);
  /// Records that the saga token `id` (expiring at unix second `expires`)
  /// is being resumed; false when it already was (a token resumes once).
  bool first_resume(const std::string& id, std::int64_t expires);
  /// Abandons every parked call: no continuation can come any more.
  void abandon_parked();
  /// Calls parked now (for metrics).
  std::size_t parked_count() const;
  /// abandon_parked(), then waits for the running calls (never on the loop
  /// they run on).
  void drain();

 private:
  /// The calls running, shared with their coroutines: one destroyed with
  /// the loop after the engine still counts itself out safely.
  struct Running {
    util::Mutex mu;
    std::condition_variable idle;
    std::size_t count GUARDED_BY(mu) = 0;
    bool stopping GUARDED_BY(mu) = false;
  };
  const std::shared_ptr<Running> running_ = std::make_shared<Running>();
  mutable util::Mutex mu_;
  std::map<std::string, std::shared_ptr<Parked>> parked_ GUARDED_BY(mu_);
  /// Ids of the saga tokens resumed, until they expire (docs/protocol.md, "Sagas").
  std::map<std::string, std::int64_t> resumed_ GUARDED_BY(mu_);
};

/// The `inputRequests` map (key -> {method, params}) of `questions`: how a
/// client of the stateless revision is asked, in an input_required result
/// or a task.
json::Value input_requests(const std::vector<Question>& questions, json::Allocator& a);

}  // namespace mcpgw::saga
