#pragma once
// One supervised connection to an upstream MCP server: connecting (a child
// process or an HTTP session), the revision probe and initialize, listing,
// reconnecting with backoff, the requests sent on it through the send
// filters, and what the server sends back on its own. A server
// (upstream/upstream.hpp) holds its shared link and, for `session:
// per_client` or a per-principal OAuth grant, one link per client or
// principal; what concerns the server as a whole (circuit breaker,
// max_concurrency, draining, OAuth consent) is the server's, not a link's.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "oauth/client.hpp"
#include "transport/connection.hpp"
#include "transport/io.hpp"
#include "upstream/breaker.hpp"
#include "upstream/log_gate.hpp"
#include "upstream/origin.hpp"
#include "upstream/send_filter.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::upstream {

/// What the upstream offers, as it last listed it (every page, its order).
struct Listing {
  json::Document tools{rapidjson::kArrayType};
  json::Document resources{rapidjson::kArrayType};
  json::Document resource_templates{rapidjson::kArrayType};
  json::Document prompts{rapidjson::kArrayType};
  bool has_resources = false, has_prompts = false, has_completions = false, can_subscribe = false;
  /// The server's `capabilities.extensions` (an object; empty when it
  /// declares none).
  json::Document extensions{rapidjson::kObjectType};
  /// Skill entries from skills/list, when the server offers Skills.
  json::Document skills{rapidjson::kArrayType};
  bool has_skills = false, can_read_directories = false;
  /// The server runs tools as tasks: it declares `tasks` (2025-11-25) or
  /// the tasks extension (2026-07-28).
  bool has_tasks = false;
};

/// Hears about an upstream's changes; called on the I/O loop (must not block).
class Listener {
 public:
  virtual ~Listener() = default;
  /// The listing changed (connect, reconnect, list_changed).
  virtual void on_tools_changed(const std::string& server) = 0;
  /// A notification for clients, e.g. notifications/resources/updated.
  virtual void on_upstream_notification(const std::string& server, jsonrpc::Message& msg) = 0;
  /// The server's connection came up or went down (told at once, before
  /// any catalog change).
  virtual void on_health(const std::string& /*server*/, bool /*up*/) {}
  /// The server's circuit breaker changed state.
  virtual void on_circuit(const std::string& /*server*/, Breaker::State /*state*/) {}
  /// What a log line may show of `text`, written by the server (its
  /// stderr): by default all of it; the gateway masks secrets (redaction).
  virtual std::string log_text(std::string_view text) const { return std::string(text); }
};

/// Whom a link is for, when it is not the server's shared one: one client
/// session (`session: per_client`) or one principal (an OAuth grant per
/// principal).
struct Owner {
  std::string protocol;   ///< a Client link's client's revision (mirrored under `protocol: auto`)
  std::string principal;  ///< whose OAuth token the link sends
};

class Link final : public std::enable_shared_from_this<Link> {
 public:
  /// Where the connection stands: an attempt under way (the first or a
  /// reconnect), up, or down until the next attempt (status() says why).
  enum class State { Connecting, Connected, Down };
  /// Whose link it is: the server's shared one (its health and listing are
  /// the server's), one client's, or one principal's (its listing is its
  /// server's, told through `on_listed`).
  enum class Role { Shared, Client, Principal };

  /// `io`: the loop the connection lives on. `oauth`: the server's OAuth
  /// client (servers[].oauth), else null. `owner`: whom a Client or
  /// Principal link is for; `client_extensions`: a Client link's client's
  /// `capabilities.extensions` (mirrored). `on_listed`: a Principal link's
  /// listing, each time it lists.
  Link(config::Server cfg, transport::Io& io, Listener& listener, std::shared_ptr<oauth::Client> oauth, Role role,
       Owner owner = {}, const json::Value* client_extensions = nullptr,
       std::function<void(std::shared_ptr<const Listing>)> on_listed = {});
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  /// Starts connecting in the background (a coroutine on the loop).
  void start();
  /// Waits until the first connection attempt has finished (either way) or
  /// `deadline`.
  Task<> first_attempt(std::chrono::steady_clock::time_point deadline);
  /// Closes the connection (stops the child); pending calls fail. Off the
  /// loop, waits until it is over; on the loop it only begins it.
  void stop();
  /// What the calls a stop cuts are told (a reload replaced or removed the
  /// server): set before stop_async().
  void set_stop_reason(std::string reason);
  /// stop() for a coroutine: resumes once the supervisor ended (connection
  /// closed, child reaped). The caller keeps the link alive.
  Task<> stop_async();
  /// Waits (until `deadline`) for a connection attempt under way to end;
  /// true when the link is connected then.
  Task<bool> wait_settled(std::chrono::steady_clock::time_point deadline);
  /// Sends logging/setLevel `level` now and on every reconnect (stateful
  /// servers that offer logging).
  void set_log_level(std::string level);

  Role role() const { return role_; }
  const std::string& principal() const { return principal_; }
  bool ready() const { return ready_.load(); }
  /// True while its supervisor runs (a principal's link ends it when it
  /// cannot connect).
  bool supervising() const;
  /// "connected" or why not.
  std::string status() const;
  State state() const;
  /// The first connection attempt has finished (either way) or stop() came.
  bool settled() const;
  /// The MCP revision spoken on the current (or last) connection; "" before one.
  std::string protocol() const;
  /// The server speaks the stateless revision (2026-07-28) on this link.
  bool modern() const;
  /// The last thing that went wrong with the link (a failed connection or
  /// initialize, a connection that died, a request that got no answer),
  /// and when (Unix ms); empty text when nothing did yet.
  struct Trouble {
    std::string what;
    std::int64_t unix_ms = 0;
  };
  Trouble last_trouble() const;
  /// Last known listing (kept while reconnecting); never null.
  std::shared_ptr<const Listing> listing() const;
  /// Until this link has listed for itself, it lists `inherited` (what the
  /// server a reload replaced last listed).
  void inherit_listing(std::shared_ptr<const Listing> inherited);
  /// Process id of a stdio link's current child, else 0.
  long pid() const { return pid_.load(); }

  /// tools/call `tool` on this link with its input rounds. Never throws
  /// and never hangs past the deadline: failures become isError results
  /// naming the server.
  Task<Reply> call_tool(std::string_view tool, const json::Value* arguments, const json::Value* meta,
                        const CallOptions& opts);
  /// Any other request (resources/read, prompts/get, ...). Failures become
  /// a JSON-RPC error naming the server.
  Task<Reply> request(std::string_view method, const json::Value& params, const CallOptions& opts);

 private:
  std::chrono::steady_clock::time_point deadline() const {
    return std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.timeout_ms);
  }
  /// After `dead` failed (null: there was no connection), has the
  /// supervisor connect again and waits, until `deadline`, for the outcome
  /// of its next attempt; true when a new connection is up.
  Task<bool> renew(std::shared_ptr<transport::Connection> dead, std::chrono::steady_clock::time_point deadline);
  /// Connects, initializes, lists, waits for the connection to die or a
  /// list to change, and reconnects with backoff, until stop().
  Task<> supervise();
  /// Marks the link connecting; false when it is stopping.
  bool start_attempt();
  /// Connects (`conn`, set once there is a connection) and initializes.
  Task<Result<void>> connect_and_initialize(std::shared_ptr<transport::Connection>& conn);
  /// Lists `conn` and waits for it to die or a list to change, over and
  /// over, until it dies or stop(); the error that ended it otherwise.
  /// `listen_stop` ends the subscriptions/listen it starts.
  Task<Result<void>> serve_connection(std::shared_ptr<transport::Connection> conn,
                                      std::shared_ptr<CancelSignal>& listen_stop);
  /// Makes `listing`, just listed on `conn`, the link's (`first`: the
  /// connection's first listing, which counts its attempt).
  void go_live(std::shared_ptr<transport::Connection> conn, std::shared_ptr<const Listing> listing, bool first);
  /// Ends the attempt whose outcome is `ok`: the link is down, `conn`
  /// (null when none came) closed.
  Task<> end_attempt(const Result<void>& ok, std::shared_ptr<transport::Connection> conn,
                     std::shared_ptr<CancelSignal> listen_stop);
  Result<std::shared_ptr<transport::Connection>> connect();
  /// Probes `server/discover`: true when the server speaks the stateless
  /// revision (then used without initialize).
  Task<bool> discover(transport::Connection& c);
  Task<Result<void>> initialize(transport::Connection& c);
  /// The ClientCapabilities this link declares in initialize.
  json::Document own_capabilities() const;
  /// Sends logging/setLevel with log_level_ on `c`, when there is one to send
  /// and the server offers logging.
  Task<> send_log_level(std::shared_ptr<transport::Connection> c);
  /// Adds the stateless revision's `_meta` envelope to request params `p`,
  /// for the client of `opts` (none: the gateway itself).
  void add_envelope(json::Document& p, const CallOptions* opts) const;
  /// Keeps a subscriptions/listen open on `c` so list changes arrive, until `stop`.
  Task<> listen_for_changes(std::shared_ptr<transport::Connection> c, std::shared_ptr<CancelSignal> stop);
  static transport::Response failed(const jsonrpc::Id& id, int code, const std::string& message);
  /// Why request outcome `r` has no answer, readably.
  std::string failure_text(const transport::Response& r) const;
  /// A copy of a final result of the server, without the framing of the
  /// revision its request went out in (`stateless`).
  static json::Document own_result(const json::Value& result, bool stateless);
  /// The session a request made with `opts` went in (Reply::session).
  std::string answering_session(const CallOptions& opts) const;
  Task<Result<json::Document>> list_pages(transport::Connection& c, const char* method, const char* key);
  Task<Result<std::shared_ptr<Listing>>> list_all(transport::Connection& c);
  /// The attributes and outcome of the client span of request `out`
  /// (OpenTelemetry's MCP conventions).
  void describe_client_span(mcp::Span& span, const Outgoing& out, const transport::Response& r) const;
  /// One request for the send filters: `params` with the envelope when the
  /// link speaks the stateless revision (`stateless`, read once per
  /// request), the transport's options from `opts`.
  Outgoing outgoing(std::string_view method, json::Document params, const CallOptions& opts,
                    std::vector<std::pair<std::string, std::string>> headers, bool stateless) const;
  /// call_tool's request, and its Reply from the outcome `r` of `out`.
  Outgoing tool_call(std::string_view tool, const json::Value* arguments, const json::Value* meta,
                     const CallOptions& opts) const;
  Reply tool_reply(const transport::Response& r, const Outgoing& out) const;
  /// request()'s Reply from the outcome `r` of `out`.
  Reply request_reply(const transport::Response& r, const Outgoing& out) const;
  // The send filters (upstream/link_send.cpp), nested so that each reaches
  // the part of the link's state that is its concern.
  class InputFilter;
  class TraceFilter;
  class FailureFilter;
  class ClientRoutingFilter;
  class ForwardFilter;
  class RenewalFilter;
  /// This link's send filters, outermost first.
  Chain<SendFilter> send_filters();
  /// A call in flight that has a client to reach.
  struct ActiveCall {
    std::shared_ptr<ClientChannel> client;
    std::chrono::steady_clock::time_point deadline;
    std::uint64_t seq = 0;  ///< the key of calls_
  };
  void on_message(jsonrpc::Message& m);
  /// Writes a log message the server sent outside any call to the gateway's
  /// log, within log_gate_; what it holds back is told as one count a second.
  void log_line(const json::Value& params);
  /// Handles what the server sent on its own or while a call ran; `to` is
  /// the call it belongs to, when known.
  void route(jsonrpc::Message& m, const std::optional<ActiveCall>& to);
  /// The call a message not tied to a request belongs to: stdio gives no
  /// link, so it is the client whose calls are in flight, if there is
  /// exactly one such client.
  std::optional<ActiveCall> sole_client() const;
  /// Asks `to`'s client the server's request `m` and answers the server.
  Task<> forward_request(std::shared_ptr<jsonrpc::Message> m, ActiveCall to);
  /// Begins stopping (the supervisor is woken, requests waiting on a
  /// client end); false when the link is stopped already.
  bool begin_stop();
  /// Waits `d` unless stop() comes first; false when it did.
  Task<bool> wait_backoff(std::chrono::milliseconds d);
  /// Waits until `ready()` (checked under mu_: a lambda marked
  /// REQUIRES(mu_)) holds, or `deadline`; true when it held.
  Task<bool> wait_until(const std::function<bool()>& ready,
                        std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());
  std::shared_ptr<transport::Connection> connection() const;

  // Set by the constructor, then only read: no lock.
  const config::Server cfg_;
  transport::Io& io_;
  Listener& listener_;
  const std::shared_ptr<oauth::Client> oauth_;
  const Role role_;
  const std::string client_protocol_;  ///< a Client link's client's revision
  const std::string principal_;        ///< a Principal link's principal (its OAuth identity)
  json::Document client_extensions_;   ///< the extensions a Client link's client declared
  const std::function<void(std::shared_ptr<const Listing>)> on_listed_;
  mutable util::Mutex mu_;
  /// Wakes the supervisor and whoever waits on the connection (renew,
  /// first_attempt); a lock of its own.
  Event changed_;
  /// The supervisor ended, for stop() off the loop (shutdown, `mcpgw
  /// check`), which may block; coroutines wait on changed_ instead. Waited
  /// on with mu_, notified with it held.
  std::condition_variable stopped_;
  bool stopping_ GUARDED_BY(mu_) = false;
  /// Why the link was stopped, for the calls it cuts ("" = no reason worth
  /// telling, as at shutdown).
  std::string stop_reason_ GUARDED_BY(mu_);
  bool first_done_ GUARDED_BY(mu_) = false;
  bool conn_dead_ GUARDED_BY(mu_) = false;
  bool refresh_ GUARDED_BY(mu_) = false;
  bool supervising_ GUARDED_BY(mu_) = false;  ///< the supervisor coroutine runs
  bool modern_ GUARDED_BY(mu_) = false;  ///< the server speaks the stateless revision
  std::string log_level_ GUARDED_BY(mu_);  ///< for logging/setLevel; "" = never asked
  std::shared_ptr<transport::Connection> conn_ GUARDED_BY(mu_);
  std::shared_ptr<const Listing> listing_ GUARDED_BY(mu_) = std::make_shared<Listing>();
  json::Document server_caps_ GUARDED_BY(mu_){rapidjson::kObjectType};
  std::string status_ GUARDED_BY(mu_) = "connecting";
  State state_ GUARDED_BY(mu_) = State::Connecting;
  std::string protocol_ GUARDED_BY(mu_);
  Trouble trouble_ GUARDED_BY(mu_);
  /// Records `what` as the last trouble.
  void note_trouble_locked(std::string what) REQUIRES(mu_);
  std::atomic<bool> ready_{false};
  std::uint64_t attempts_ GUARDED_BY(mu_) = 0;  ///< connection attempts finished (either way)
  std::atomic<long> pid_{0};
  LogGate log_gate_;  // a lock of its own
  std::atomic<bool> suppressing_{false};  ///< a count of held-back log lines is due
  util::Mutex progress_mu_;
  std::map<std::string, std::function<void(json::Value&)>> progress_ GUARDED_BY(progress_mu_);
  std::atomic<std::uint64_t> next_token_{1};
  /// Wire order of the requests the server sends to clients (their
  /// `mcpgw/inputOrder` hint): each is relayed by a coroutine of its own.
  std::atomic<std::uint64_t> next_forward_{1};
  mutable util::Mutex calls_mu_;
  std::map<std::uint64_t, ActiveCall> calls_ GUARDED_BY(calls_mu_);  // by a local sequence number
  /// The same calls by the progress token sent with them.
  std::map<std::string, ActiveCall> by_token_ GUARDED_BY(calls_mu_);
  /// The same calls by task id, for what the server sends about a task
  /// (tied to it by `_meta` related-task, or naming it as `taskId`): the
  /// server's tasks the gateway's requests name (tasks/result), and the
  /// tasks clients created for the server's own task-augmented requests.
  std::map<std::string, ActiveCall> by_task_ GUARDED_BY(calls_mu_);
  std::uint64_t next_call_ GUARDED_BY(calls_mu_) = 0;
  /// Requests forwarded to a client, by the server's id (JSON text), so the
  /// server's notifications/cancelled reaches them.
  std::map<std::string, std::shared_ptr<CancelSignal>> forwarded_ GUARDED_BY(calls_mu_);
  const Chain<SendFilter> send_chain_ = send_filters();
};

}  // namespace mcpgw::upstream
