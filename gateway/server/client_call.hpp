#pragma once
// The client of one request as the upstreams working on it reach it: their
// requests (elicitation, sampling, roots) and notifications (progress, log
// messages) go back to that client, in the form the client speaks.
//
// A client of the stateful revisions gets them on the request's stream,
// under request ids of the gateway's own, and answers through
// Router::handle. A client of the stateless revision (2026-07-28) cannot be
// sent requests: the call is *suspended* instead. Its questions are handed
// out (Router turns them into an `input_required` result), the upstream
// keeps waiting, and the client's retry brings the answers.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jsonrpc/message.hpp"
#include "server/session.hpp"
#include "upstream/origin.hpp"

namespace mcpgw::server {

/// A question an upstream asked a suspended call's client.
struct Question {
  std::string key;     ///< the inputRequests key
  std::string method;  ///< elicitation/create, sampling/createMessage, roots/list
  json::Document params;
};

class ClientCall final : public upstream::ClientChannel, public std::enable_shared_from_this<ClientCall> {
 public:
  /// `suspends`: the client speaks the stateless revision or the saga
  /// methods. `checks_capabilities`: a request the client did not declare
  /// the capability for is refused (a saga client answers whatever steps it
  /// is handed: it declared nothing for them).
  ClientCall(std::shared_ptr<McpSession> s, transport::Exchange& ex, std::atomic<std::uint64_t>& ids, bool suspends,
             bool checks_capabilities = true);

  const std::string& session() const override { return session_id_; }
  upstream::Reply request(std::string_view method, const json::Value* params,
                          std::chrono::steady_clock::time_point deadline, CancelSignal& cancel) override;
  void notify(std::string_view method, const json::Value* params) override;
  json::Document capabilities() const override;
  std::string log_level() const override;

  /// Sends a message related to the request now being served (progress).
  void send(std::string msg);

  /// The client's answer to our request `id` (stateful revisions).
  void answer(const std::string& id, jsonrpc::Message msg);
  /// The request is over: nothing more is sent through its stream.
  void close();
  /// The session ended: no answer will come.
  void abandon();

  // --- suspended calls (stateless revision) ---

  /// Serves the client's next request (a retry): its session (envelope) and
  /// stream. The exchange must outlive the attachment; detach() before it ends.
  void attach(std::shared_ptr<McpSession> s, transport::Exchange& ex);
  void detach();
  /// Answers known before they are asked, by key: a retry that reaches a
  /// process where the call is not suspended replays it with them.
  void preload(const json::Value& answers);
  /// Waits until `finished()` or a question is pending (all of a batch the
  /// upstream announced), or `cancel`; returns the pending questions.
  std::vector<Question> wait(const std::function<bool()>& finished, CancelSignal& cancel);
  /// Wakes wait() (the work finished).
  void wake();
  /// Answers the pending questions found in `answers`; returns the keys of
  /// those still unanswered.
  std::vector<std::string> answer_pending(const json::Value& answers);
  /// Every answer given so far, by key (for the next requestState).
  json::Document answers() const;

 private:
  struct Pending {
    std::optional<upstream::Reply> answer;
  };
  struct Asked {
    Question q;
    std::shared_ptr<Pending> pending;
  };
  upstream::Reply stream_request(std::string_view method, const json::Value* params,
                                 std::chrono::steady_clock::time_point deadline, CancelSignal& cancel,
                                 const std::string& client);
  upstream::Reply suspend_request(std::string_view method, json::Document params, std::string key, std::size_t batch,
                                  std::chrono::steady_clock::time_point deadline, CancelSignal& cancel);

  std::shared_ptr<McpSession> s_;
  std::string session_id_;
  transport::Exchange* ex_;  ///< only while !closed_
  std::atomic<std::uint64_t>& ids_;
  const bool suspends_;
  const bool checks_capabilities_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false, gone_ = false;
  std::map<std::string, std::shared_ptr<Pending>> pending_;  ///< stateful: by our request id
  std::vector<Asked> asked_;                                ///< suspended: unanswered questions
  std::size_t batch_ = 1;
  json::Document preloaded_{rapidjson::kObjectType};
  json::Document given_{rapidjson::kObjectType};
};

}  // namespace mcpgw::server
