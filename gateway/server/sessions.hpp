#pragma once
// Client sessions: what the gateway knows of each client (McpSession, its
// state private and changed through operations that take the session's one
// lock) and the registry of the live ones (Sessions).
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "jsonrpc/json.hpp"
#include "mcp/codec.hpp"
#include "server/metrics.hpp"
#include "transport/downstream.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::server {

class ClientCall;

/// One client session, or for a client of the stateless revision, one
/// request (`stateless()`), whose envelope fills the same state.
class McpSession final : public transport::Session, public std::enable_shared_from_this<McpSession> {
 public:
  /// A session in `mode` ("all" or a configured one).
  McpSession(std::string mode, bool stateless);
  /// A stateless request's own session, described by its envelope; it
  /// shares `parent`'s identity, mode and way to the client.
  static std::shared_ptr<McpSession> for_request(const std::shared_ptr<McpSession>& parent,
                                                 const mcp::Envelope& envelope);

  const std::string& mode() const { return mode_; }
  bool stateless() const { return stateless_; }

  // --- the client, as initialize or the envelope describe it ---

  /// Records what initialize negotiated and declared.
  void initialize(std::string version, const json::Value* capabilities, std::string client_name,
                  std::string client_version = {});
  /// The client chose a session revision with initialize.
  bool negotiated() const;
  /// The revision the client speaks ("" before initialize).
  std::string protocol_version() const;
  json::Document capabilities() const;
  /// "" when the client gave no name.
  std::string client_name() const;
  /// "" when the client gave no version.
  std::string client_version() const;
  /// notifications/initialized arrived.
  void mark_initialized();
  bool initialized() const;
  /// The session's GET stream is open on this process (cluster: this
  /// replica then holds its resource subscriptions).
  void set_stream_here(bool here) { stream_here_ = here; }
  bool stream_here() const { return stream_here_; }

  // --- logging ---

  /// logging/setLevel.
  void set_log_level(std::string level);
  /// Least severe level the client wants; "" = none (a stateless request
  /// without `io.modelcontextprotocol/logLevel`).
  std::string log_level() const;
  /// The level, and whether the client asked for it (logging/setLevel).
  std::pair<std::string, bool> log_preference() const;

  // --- requests in flight (for notifications/cancelled) ---

  /// `ex` serves request `key` (its JSON id text) until untrack().
  void track(const std::string& key, std::weak_ptr<transport::Exchange> ex);
  void untrack(const std::string& key);
  /// The exchange of request `key`, if it is in flight.
  std::shared_ptr<transport::Exchange> in_flight(const std::string& key) const;

  // --- requests forwarded to the client (server-to-client) ---

  /// `call` waits for the client's answer to our request `id`; false (and
  /// nothing recorded) when `max` requests of the session already wait.
  bool await_answer(const std::string& id, std::weak_ptr<ClientCall> call, std::size_t max);
  void forget_answer(const std::string& id);
  /// The call waiting for the answer to `id`, if any.
  std::shared_ptr<ClientCall> asker(const std::string& id) const;

  /// The session ends: cancels its requests in flight and gives up the
  /// requests forwarded to it.
  void end();

 private:
  const std::string mode_;
  const bool stateless_;
  /// Shared: every request of the session reads it (several at once on
  /// different workers); only initialize, tracking and forwarding write.
  mutable util::SharedMutex mu_;
  std::string protocol_version_ GUARDED_BY(mu_);
  json::Document capabilities_ GUARDED_BY(mu_){rapidjson::kObjectType};
  std::string client_name_ GUARDED_BY(mu_);
  std::string client_version_ GUARDED_BY(mu_);
  std::string log_level_ GUARDED_BY(mu_) = "info";
  bool log_level_set_ GUARDED_BY(mu_) = false;
  bool initialized_ GUARDED_BY(mu_) = false;
  std::map<std::string, std::weak_ptr<ClientCall>> forwarded_ GUARDED_BY(mu_);
  /// Every request files itself here and leaves: a lock of its own, so
  /// that it never holds up the readers of mu_.
  mutable util::Mutex inflight_mu_;
  std::map<std::string, std::weak_ptr<transport::Exchange>> inflight_ GUARDED_BY(inflight_mu_);
  std::atomic<bool> stream_here_{false};  ///< atomic: no lock
};

/// The registry of live client sessions (not the stateless requests' own).
class Sessions {
 public:
  /// `log_level` is told the most verbose level any live session asked
  /// for, whenever it changes (to pass it on to the upstreams).
  Sessions(Metrics& metrics, std::function<void(const std::string&)> log_level);

  void add(std::shared_ptr<McpSession> s);
  void remove(const std::shared_ptr<McpSession>& s);
  /// The live session `id`, or null.
  std::shared_ptr<McpSession> find(const std::string& id);
  /// Sends `note` to every live session for which `wants` is true.
  void notify(const std::string& note, const std::function<bool(const McpSession&)>& wants);
  /// Recomputes the most verbose level the sessions want; tells the hook
  /// when it changed.
  void update_log_level();
  /// How many live sessions each principal has ("" = anonymous), most first.
  std::vector<std::pair<std::string, std::size_t>> count_by_principal();

 private:
  Metrics& metrics_;
  std::function<void(const std::string&)> log_level_hook_;
  util::Mutex mu_;
  std::set<std::shared_ptr<McpSession>> live_ GUARDED_BY(mu_);
  /// The level last passed to the hook (called with mu_ held, so that two
  /// updates pass their levels on in the order they computed them).
  std::string upstream_log_level_ GUARDED_BY(mu_);
};

}  // namespace mcpgw::server
