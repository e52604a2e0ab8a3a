#pragma once
// The client of one request as the upstreams working on it reach it: their
// requests (elicitation, sampling, roots) and notifications (progress, log
// messages) go back to that client, in the form the client speaks.
//
// What they say is redacted (redact_relayed) before the client sees it.
//
// A client of the stateful revisions gets them on the request's stream,
// under request ids of the gateway's own, and answers through
// Router::handle. A client of the stateless revision (2026-07-28) cannot be
// sent requests, nor can a client of the saga methods: the call is
// *suspended* instead (saga/engine.hpp). Its questions go to the call's
// saga::Inbox, from where they are handed out (as an `input_required`
// result or saga steps), the upstream keeps waiting, and the client's
// continuation brings the answers.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "jsonrpc/message.hpp"
#include "saga/engine.hpp"
#include "server/redaction.hpp"
#include "server/sessions.hpp"
#include "upstream/origin.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::server {

class ClientCall;

/// Progress notifications of one client call. Progress must increase, and
/// a chain mixes the upstreams' own progress with one step per hop: the
/// upstreams' values pass only when they go forward, a hop takes the next
/// whole step. A suspended call's continuations bring their own tokens.
class Progress {
 public:
  explicit Progress(ClientCall& client) : client_(client) {}
  /// Reports under `token` from now on (null: not at all).
  void retarget(const json::Value* token);
  /// An upstream's notifications/progress params (its token removed).
  void forward(json::Value& params);
  /// The next whole step, e.g. a chain hop.
  void step(const std::string& message);

 private:
  void send(const json::Value& params);
  ClientCall& client_;
  util::Mutex mu_;
  json::Document token_ GUARDED_BY(mu_);
  std::optional<double> last_ GUARDED_BY(mu_);
};

/// How many server-to-client requests may await the client's answer at
/// once (limits.max_client_requests_per_call, _per_session). One more is
/// answered to the upstream at once with error -32000 naming the limit.
struct ClientRequestLimits {
  std::size_t per_call = 64;
  std::size_t per_session = 256;
};

/// What a ClientCall is made with besides its client: the limits of its
/// requests and the redaction of what upstreams send through it.
struct ClientCallSettings {
  ClientRequestLimits limits;
  RelayRedaction redaction;
};

class ClientCall final : public upstream::ClientChannel, public std::enable_shared_from_this<ClientCall> {
 public:
  /// `inbox`: the call suspends (the client speaks the stateless revision
  /// or the saga methods) and its questions go there; null: they stream.
  /// `checks_capabilities`: a request the client did not declare the
  /// capability for is refused (a saga client answers whatever steps it is
  /// handed: it declared nothing for them).
  ClientCall(std::shared_ptr<McpSession> s, transport::Exchange& ex, std::atomic<std::uint64_t>& ids,
             std::shared_ptr<saga::Inbox> inbox, ClientCallSettings settings, bool checks_capabilities = true);

  const std::string& session() const override { return session_id_; }
  Task<upstream::Reply> request(std::string_view method, const json::Value* params,
                                std::chrono::steady_clock::time_point deadline, CancelSignal& cancel) override;
  void notify(std::string_view method, const json::Value* params) override;
  json::Document capabilities() const override;
  std::string log_level() const override;
  bool can_ask() const override;
  /// How what upstreams send the client through this call is redacted.
  const RelayRedaction& redaction() const { return redaction_; }

  /// Sends a progress notification of the request now being served (one
  /// still waiting for a slow client is replaced by it).
  void send_progress(std::string msg);
  /// The call's progress reporter.
  Progress& progress() { return progress_; }

  /// The client's answer to our request `id` (stateful revisions).
  void answer(const std::string& id, jsonrpc::Message msg);
  /// The request is over: its requests still awaiting the client are
  /// withdrawn (notifications/cancelled, before the answer) and nothing
  /// more is sent through its stream.
  void close();
  /// The session ended: no answer will come.
  void abandon();

  /// A suspended call serves the client's next request (a continuation):
  /// its session (envelope) and stream. The exchange must outlive the
  /// attachment; detach() before it ends.
  void attach(std::shared_ptr<McpSession> s, transport::Exchange& ex);
  void detach();

  /// The call serves gateway task `id`: what an upstream asks the client
  /// for it is tied to that id (`_meta` related-task), not the upstream's.
  void serve_task(std::string id);

 private:
  struct Pending {
    /// Under the call's mu_ (not GUARDED_BY: a lock of another class).
    std::optional<upstream::Reply> answer;
  };
  Task<upstream::Reply> stream_request(std::string_view method, json::Document params, bool has_params,
                                       std::chrono::steady_clock::time_point deadline, CancelSignal& cancel,
                                       std::string client);
  /// Tasks the client runs for an upstream's task-augmented requests
  /// (MCP 2025-11-25): the upstream knows them by ids of the gateway's
  /// ("mcpgw-ct-N"), unique across clients, so its tasks/* requests route
  /// back to this call. Rewrites a tasks/* request's id to the client's;
  /// an error reply for an id this call did not hand out.
  std::optional<upstream::Reply> to_client_task(std::string_view method, json::Document& params);
  /// Rewrites the client's task ids in its reply to a request of `method`
  /// to the gateway's (registering new ones).
  void from_client_task(std::string_view method, upstream::Reply& reply);

  std::shared_ptr<McpSession> s_ GUARDED_BY(mu_);
  const std::string session_id_;  ///< set at construction (attach() leaves it): read without the lock
  transport::Exchange* ex_ GUARDED_BY(mu_);  ///< only while !closed_
  std::atomic<std::uint64_t>& ids_;
  const std::shared_ptr<saga::Inbox> inbox_;
  const bool checks_capabilities_;
  const ClientRequestLimits limits_;
  const RelayRedaction redaction_;
  Progress progress_{*this};
  mutable util::Mutex mu_;
  Event changed_;  ///< an answer came, the call ended, the session ended (a lock of its own)
  bool closed_ GUARDED_BY(mu_) = false;
  bool gone_ GUARDED_BY(mu_) = false;
  std::size_t asking_ GUARDED_BY(mu_) = 0;  ///< requests of this call awaiting the client
  std::map<std::string, std::shared_ptr<Pending>> pending_ GUARDED_BY(mu_);  ///< by our request id
  std::string task_ GUARDED_BY(mu_);  ///< the gateway task served, "" for none
  std::map<std::string, std::string> client_tasks_ GUARDED_BY(mu_);  ///< the gateway's id -> the client's
};

}  // namespace mcpgw::server
