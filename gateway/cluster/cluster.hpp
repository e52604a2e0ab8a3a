#pragma once
// The replicas' shared state (docs/operations.md, "Scale-out"). Sealed session ids let
// any replica serve any session with nothing shared; Redis, when
// configured, holds what must hold across replicas: ended sessions (a
// sorted set every replica mirrors in memory, so checking an id costs no
// round trip), single-use tokens, a session's log level and resource
// subscriptions; one pub/sub channel tells the replicas of changes. Nothing
// here is on the path of an ordinary call.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cluster/redis.hpp"
#include "cluster/sealer.hpp"
#include "config/config.hpp"
#include "integrity/store.hpp"
#include "oauth/store.hpp"
#include "transport/shared_sessions.hpp"
#include "util/thread_annotations.hpp"

namespace boost::asio {
class io_context;
}

namespace mcpgw::cluster {

/// The pub/sub channel on which the replicas tell each other of changes.
inline constexpr const char* kEvents = "mcpgw:events";
/// The hash of the pinned tool definitions (field "<server>\n<tool>").
inline constexpr const char* kPins = "mcpgw:pins";

/// The pins a reply to HGETALL kPins holds.
Result<integrity::Ledger> ledger_of(const RedisReply& r);
/// The HSET that writes `changes` to kPins.
std::vector<std::string> pins_command(const std::vector<integrity::Change>& changes);

/// What /readyz says of the cluster machinery.
struct Health {
  bool redis_configured = false;
  bool redis_up = false;
  /// The ended sessions were loaded from Redis at least once: this replica
  /// can tell an ended session from a live one.
  bool synced = false;
  std::string status;  ///< "up" or why Redis is not
};

class Cluster final : public transport::SharedSessions {
 public:
  /// What the server is told of sessions held here.
  struct Hooks {
    /// Another replica set session `id`'s log level (or it was loaded).
    std::function<void(const std::string& id, const std::string& level)> log_level;
    /// Session `id`'s resource subscriptions changed (on any replica).
    std::function<void(const std::string& id)> subscriptions_changed;
    /// News about gateway task `digest`: `kind` "task" (its state changed),
    /// "answers" (`payload`: the client's answers, JSON) or "cancel".
    std::function<void(const std::string& digest, const std::string& kind, const std::string& payload)> task;
  };

  Cluster(const config::Cluster& cfg, boost::asio::io_context& io);
  ~Cluster() override;
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  /// Before start().
  void set_hooks(Hooks hooks);
  /// Connects to Redis (when configured).
  void start();
  /// Closes the Redis connections; not on the loop.
  void stop();

  /// cluster.secret is set: session ids are sealed.
  bool sealing() const { return sealer_.has_value(); }
  /// cluster.redis is set.
  bool redis() const { return cmd_ != nullptr; }
  /// Also retries a first read of the ended sessions that failed.
  Health health();

  // --- transport::SharedSessions ---
  Result<std::string> seal(const transport::SealedSession& s) override;
  std::variant<transport::SealedSession, transport::OpenRefusal> open(std::string_view id) override;
  void end(const std::string& id, std::function<void(Result<void>)> done) override;
  void on_ended_elsewhere(std::function<void(const std::string& id)> drop) override;
  void held(const std::string& id) override;
  void released(const std::string& id) override;

  // --- for the server ---

  /// Records the first use of token `id` of `kind` (until unix second
  /// `expires`): true the first time cluster-wide, false after; an error
  /// naming Redis when it cannot tell.
  Task<Result<bool>> use_once(const std::string& kind, const std::string& id, std::int64_t expires);
  /// Shares session `id`'s log level with the other replicas; failures are
  /// logged (the level holds here regardless). Does not block.
  void share_log_level(const std::string& id, const std::string& level);
  /// Adds (`on`) or removes `uri` to session `id`'s subscriptions and tells
  /// the replica holding its stream; an error naming Redis when it cannot.
  /// Awaited, holding no thread (the Redis connection may live on the
  /// caller's own worker).
  Task<Result<void>> set_subscription(std::string id, std::string uri, bool on);
  /// Session `id`'s subscriptions, to `done` (on an I/O thread).
  void subscriptions(const std::string& id, std::function<void(Result<std::vector<std::string>>)> done);

  /// The upstream OAuth tokens' store in Redis (cluster.redis set), shared
  /// by every replica; it tells of records another replica changed.
  std::shared_ptr<oauth::TokenStore> token_store();
  /// The pinned tool definitions' store in Redis (cluster.redis set),
  /// shared by every replica; it tells of changes another replica or
  /// `mcpgw pins approve` made, and of Redis coming back.
  std::shared_ptr<integrity::Store> pin_store();


  // --- tasks the gateway runs (docs/protocol.md, "Tasks"); `done` on an I/O thread ---

  /// Stores task `id`'s state until unix second `expires`, records it as
  /// one of `principal`'s when `listed`, and tells the replicas.
  void put_task(const std::string& id, const std::string& principal, std::string state, std::int64_t expires,
                bool listed, std::function<void(Result<void>)> done);
  /// Task `id`'s state; "" when Redis has none.
  void get_task(const std::string& id, std::function<void(Result<std::string>)> done);
  /// Tells the replica running task `id` to cancel it ("cancel") or to take
  /// the client's `answers` (JSON).
  void to_task(const std::string& id, const std::string& kind, const std::string& answers = {});
  /// Records upstream task `id` as one of `principal`'s until `expires`.
  void list_task(const std::string& id, const std::string& principal, std::int64_t expires);
  /// The ids of `principal`'s tasks not yet expired.
  void tasks_of(const std::string& principal, std::function<void(Result<std::vector<std::string>>)> done);

 private:
  /// Unix second after which session `id` no longer opens.
  std::int64_t expiry_of(std::string_view id) const;
  void on_event(const std::string& payload);
  /// Another replica (or this one) changed an upstream OAuth record.
  void oauth_changed(const std::string& key);
  /// The pins changed elsewhere, or Redis is back: the pin store is told.
  void pins_changed();
  void on_state();
  /// Loads the ended sessions from Redis (after a (re)connect), writing
  /// back the ones this replica knows and Redis lost.
  void sync_ended();
  /// Records that `digest` ended; its id if held here.
  std::optional<std::string> mark_ended(const std::string& digest, std::int64_t expires);
  /// A DELETE waiting until every replica confirmed it dropped the session.
  struct EndWaiter;
  /// Counts one confirmation for `digest`.
  void confirmed(const std::string& digest);
  void finish(const std::shared_ptr<EndWaiter>& w, const char* why);

  std::optional<Sealer> sealer_;
  boost::asio::io_context& io_;
  std::int64_t ttl_s_;
  std::unique_ptr<Redis> cmd_;
  std::unique_ptr<Redis> sub_;
  std::string shown_;

  mutable util::Mutex mu_;
  Hooks hooks_ GUARDED_BY(mu_);
  std::function<void(const std::string&)> drop_ GUARDED_BY(mu_);
  std::unordered_map<std::string, std::int64_t> ended_ GUARDED_BY(mu_);  // digest -> expiry (unix s)
  std::unordered_map<std::string, std::string> held_ GUARDED_BY(mu_);    // digest -> id
  std::vector<std::shared_ptr<EndWaiter>> waiters_ GUARDED_BY(mu_);
  bool synced_ GUARDED_BY(mu_) = false;
  bool syncing_ GUARDED_BY(mu_) = false;
  class TokenStore;
  std::shared_ptr<TokenStore> tokens_ GUARDED_BY(mu_);  ///< made on first use
  class PinStore;
  std::shared_ptr<PinStore> pins_ GUARDED_BY(mu_);  ///< made on first use
};

}  // namespace mcpgw::cluster
