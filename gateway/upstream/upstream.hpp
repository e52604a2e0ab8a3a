#pragma once
// One configured upstream MCP server: its links (upstream/link.hpp: the
// shared one, and one per client or principal where the server is
// configured so), what it lists, and its calls through the call filters
// (circuit breaker, max_concurrency, the OAuth step, the link the caller's
// calls take).
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "upstream/breaker.hpp"
#include "upstream/limiter.hpp"
#include "upstream/link.hpp"

namespace mcpgw::upstream {

class Upstream final : public ToolOrigin, public std::enable_shared_from_this<Upstream> {
 public:
  /// Where the server's shared link stands (Link::State); a per-principal
  /// server, which has none, is Connected from start() to stop().
  using State = Link::State;

  /// `io`: the loop the links live on. `oauth`: the server's OAuth client
  /// (servers[].oauth), else null.
  Upstream(config::Server cfg, transport::Io& io, Listener& listener, std::shared_ptr<oauth::Client> oauth = nullptr);
  ~Upstream() override;
  Upstream(const Upstream&) = delete;
  Upstream& operator=(const Upstream&) = delete;

  /// Starts connecting in the background (a coroutine on the loop).
  void start();
  /// Waits until the first connection attempt has finished (either way).
  void wait_first_attempt(std::chrono::milliseconds timeout);
  /// wait_first_attempt for a coroutine, until `deadline`.
  Task<> first_attempt(std::chrono::steady_clock::time_point deadline);
  /// Stops the child / ends the HTTP session; pending calls fail. Stops the
  /// per-client and per-principal links too. Off the loop (shutdown, `mcpgw check`),
  /// waits until it is over; on the loop it only begins it (a coroutine
  /// that needs it over awaits stop_async()).
  void stop();
  /// stop() for a coroutine: resumes once every link's supervisor ended
  /// (connections closed, children reaped),
  /// holding no thread meanwhile. The caller keeps the upstream alive.
  Task<> stop_async();
  /// stop_async() that tells the calls it cuts `reason` (e.g. "was replaced
  /// by a configuration reload ..."), naming the server before it.
  Task<> stop_async(std::string reason);
  /// Waits until no call (tools/call or other request) is in flight on this
  /// server, or `deadline`, or stop(): before stopping a server a reload
  /// replaced or removed, so that its calls can finish.
  Task<> drain(std::chrono::steady_clock::time_point deadline);
  /// The most verbose log level the gateway's clients want: sent to a
  /// stateful-era server that offers logging (now and on every reconnect),
  /// so that what its clients asked for is emitted; each client still gets
  /// only its own level. Stateless servers get each request's level instead.
  void set_log_level(std::string level);
  std::string log_level() const;
  /// `session: per_client`: client session `session` ended; its own
  /// link to the server is closed before this resumes (so that a
  /// shutdown waiting for the session's end finds no child left running).
  Task<> end_client(std::string session);
  /// `principal`'s OAuth tokens were revoked: its links are closed.
  void end_principal(const std::string& principal);
  /// The OAuth step of a call (servers whose grant is per principal): the
  /// caller's token is at hand, or obtained (the principal's consent asked
  /// in whatever form the client speaks, or an exchange). nullopt: the call
  /// may go on; else what to answer instead (the consent link, an error
  /// naming the provider and the step). `tool_call`: answer as a tool result.
  Task<std::optional<Reply>> authorize(const CallOptions& opts, bool tool_call = true);
  /// Waits (until `deadline`) for a connection attempt under way to end;
  /// true when the server is connected then.
  Task<bool> wait_settled(std::chrono::steady_clock::time_point deadline);
  /// The caller's own link (per principal or per client), started and
  /// tried once within the call's deadline, so that its listing is known.
  Task<> prepare(const CallOptions& opts);
  /// True when each principal goes upstream with a token of its own.
  bool per_principal() const { return oauth_ && oauth_->per_principal(); }
  std::optional<UpstreamIdentity> identity_for(const Caller* caller) const override;

  const config::Server& config() const { return cfg_; }
  const std::string& name() const override { return cfg_.name; }
  int welcome_priority() const override { return cfg_.welcome_priority; }
  bool has_tool(std::string_view tool) const override;
  /// The server can take calls: its shared link is up (a per-principal
  /// server: from start() to stop()).
  bool ready() const;
  /// "connected" or why not.
  std::string status() const;
  State state() const;
  /// The first connection attempt has finished (either way) or stop() came.
  bool settled() const;
  /// When start() was called (the first attempt's start); the epoch before.
  std::chrono::steady_clock::time_point started_at() const;
  /// The MCP revision spoken on the current (or last) connection; "" before one.
  std::string protocol() const;
  /// The last thing that went wrong with the server's shared link (a
  /// failed connection or initialize, a connection that died, a request
  /// that got no answer), and when; empty text when nothing did yet.
  using Trouble = Link::Trouble;
  Trouble last_trouble() const;
  /// Last known listing (kept while reconnecting); never null.
  std::shared_ptr<const Listing> listing() const;
  /// Until this upstream has listed for itself, it lists what `previous`
  /// (the upstream a reload replaces with it) last listed, as a restarted
  /// one keeps its last known tools.
  void inherit_listing(const Upstream& previous);
  /// Process id of a stdio upstream's current child, else 0 (for diagnostics).
  long pid() const { return shared_ ? shared_->pid() : 0; }
  /// The state of the server's circuit breaker (Closed when it has none).
  Breaker::State circuit() const { return breaker_.state(); }
  /// Tool calls waiting for a max_concurrency slot.
  int calls_waiting() const { return limiter_.waiting(); }
  /// The server speaks the stateless revision (2026-07-28) now.
  bool speaks_stateless() const { return shared_ && shared_->modern(); }

  /// Calls tool `tool` (upstream name). Never throws and never hangs past
  /// the deadline: failures become isError results naming this server.
  /// The server's circuit breaker and max_concurrency apply (once per
  /// server, also for per-client and per-principal links).
  Task<Reply> call_tool(std::string_view tool, const json::Value* arguments, const json::Value* meta,
                        const CallOptions& opts) override;
  /// Any other request (resources/read, prompts/get, ...). Failures become
  /// a JSON-RPC error naming this server.
  Task<Reply> request(std::string_view method, const json::Value& params, const CallOptions& opts);
  /// Default deadline for one call to this server.
  std::chrono::steady_clock::time_point deadline() const override {
    return std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.timeout_ms);
  }

 private:
  void circuit_changed(Breaker::State state);
  /// The link calls of `opts` take: for a per_client server the calling
  /// client's own, for a per-principal one the caller's principal's
  /// (started on first use and tried once within the call's deadline),
  /// else the shared one.
  Task<Result<std::shared_ptr<Link>>> link_for(const CallOptions& opts);
  /// Callers may have links of their own (per client or per principal).
  bool own_links() const { return !shared_ || cfg_.session == config::Server::Session::PerClient; }
  /// The key of the caller's own link in links_; "" = the shared one.
  std::string owner_key(const CallOptions& opts) const;
  /// A principal's link listed the server: that listing is the server's.
  void adopt(std::shared_ptr<const Listing> listing);
  /// Asks the caller's consent (authorization_code) and waits for it.
  Task<std::optional<Reply>> consent(const CallOptions& opts, const std::string& principal, bool tool_call);
  /// Takes the per-client (or per-principal) links out of links_.
  std::map<std::string, std::shared_ptr<Link>> take_links();
  /// Marks the server stopping and wakes drain(); its links stop after.
  void begin_stop();
  // The call filters (upstream/calls.cpp), nested so that each reaches
  // the part of the server's state that is its concern.
  class BreakerFilter;
  class LimiterFilter;
  class RequestFilter;
  /// This server's call filters, outermost first.
  Chain<ToolFilter> call_filters();

  // Set by the constructor, then only read: no lock.
  const config::Server cfg_;
  transport::Io& io_;
  Listener& listener_;
  const std::shared_ptr<oauth::Client> oauth_;
  /// The shared link; null for a per-principal server, whose tools are
  /// those its principals' links list.
  const std::shared_ptr<Link> shared_;
  // Lock order: links_mu_ before mu_ and before a link's own locks
  // (link_for reads the log level and the links' state with it held).
  util::Mutex links_mu_;
  /// Links per client session ("s:<id>") or per principal ("p:<name>").
  std::map<std::string, std::shared_ptr<Link>> links_ GUARDED_BY(links_mu_);
  mutable util::Mutex mu_;
  bool started_ GUARDED_BY(mu_) = false;
  std::chrono::steady_clock::time_point started_at_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::string log_level_ GUARDED_BY(mu_);  ///< the level every link is asked for; "" = never asked
  /// A per-principal server's listing: its principals' links' last one.
  std::shared_ptr<const Listing> adopted_ GUARDED_BY(mu_) = std::make_shared<Listing>();
  /// Wakes drain() when the last call ends or stop() comes.
  Event changed_;
  Breaker breaker_;  // a lock of its own
  Limiter limiter_;  // a lock of its own
  /// Calls in flight, for drain(). Atomics: no lock.
  std::atomic<int> in_flight_{0};
  std::atomic<bool> draining_{false};
  /// Counts one call in flight for as long as it lives.
  class InFlight {
   public:
    explicit InFlight(Upstream& u);
    ~InFlight();
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

   private:
    Upstream& u_;
  };
  const Chain<ToolFilter> call_chain_ = call_filters();
};

}  // namespace mcpgw::upstream
