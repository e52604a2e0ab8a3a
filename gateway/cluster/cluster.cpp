#include "cluster/cluster.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <sstream>

#include "util/base64.hpp"

namespace mcpgw::cluster {
namespace {

constexpr const char* kEnded = "mcpgw:ended";
constexpr auto kTimeout = std::chrono::milliseconds(2000);
/// How long a DELETE waits for the replicas to confirm they dropped the
/// session; one that does not (stopped, cut off from Redis) reads the ended
/// sessions again when it reconnects.
constexpr auto kConfirmWithin = std::chrono::milliseconds(1000);

std::string session_key(const std::string& digest) { return "mcpgw:session:" + digest; }
std::string task_key(const std::string& digest) { return "mcpgw:task:" + digest; }
std::string principal_tasks_key(const std::string& principal) { return "mcpgw:tasks:" + digest_of(principal); }
std::string subs_key(const std::string& digest) { return "mcpgw:subs:" + digest; }

/// The error of a reply that is not what was asked.
std::optional<std::string> refused(const Result<RedisReply>& r) {
  if (!r) return r.error();
  if (r->type == RedisReply::Type::Error) return "Redis refused the command: " + r->text;
  return std::nullopt;
}

}  // namespace

struct Cluster::EndWaiter {
  EndWaiter(boost::asio::io_context& io, std::string d, std::function<void(Result<void>)> f)
      : digest(std::move(d)), done(std::move(f)), timer(io) {}
  std::string digest;
  // Both under the cluster's mu_ (not GUARDED_BY: a lock of another class).
  long long needed = -1;  ///< subscribers the PUBLISH reached; -1 until known
  long long confirmations = 0;
  std::function<void(Result<void>)> done;
  boost::asio::steady_timer timer;
};

Cluster::Cluster(const config::Cluster& cfg, boost::asio::io_context& io) : io_(io), ttl_s_(cfg.session_ttl_s) {
  if (!cfg.secrets.empty()) sealer_.emplace(cfg.secrets, cfg.session_ttl_s);
  if (cfg.redis.empty()) return;
  RedisEndpoint ep{cfg.redis_host, cfg.redis_port, cfg.redis_db, cfg.redis_password, ""};
  ep.shown = "redis://" + (cfg.redis_host.find(':') != std::string::npos ? "[" + cfg.redis_host + "]" : cfg.redis_host) +
             ":" + std::to_string(cfg.redis_port) + "/" + std::to_string(cfg.redis_db);
  shown_ = ep.shown;
  auto state = [this](bool, const std::string&) { on_state(); };
  cmd_ = std::make_unique<Redis>(io, ep, state);
  sub_ = std::make_unique<Redis>(io, ep, state, kEvents, [this](const std::string& p) { on_event(p); });
}

Cluster::~Cluster() { stop(); }

void Cluster::set_hooks(Hooks hooks) {
  util::MutexLock lk(mu_);
  hooks_ = std::move(hooks);
}

void Cluster::start() {
  if (!cmd_) return;
  cmd_->start();
  sub_->start();
}

void Cluster::stop() {
  if (!cmd_) return;
  sub_->stop();
  cmd_->stop();
  std::vector<std::shared_ptr<EndWaiter>> waiting;
  {
    util::MutexLock lk(mu_);
    waiting.swap(waiters_);
  }
  for (const auto& w : waiting) {
    w->timer.cancel();
    w->done(Error{"Service Unavailable: mcpgw is shutting down"});
  }
}

Health Cluster::health() {
  Health h;
  h.redis_configured = cmd_ != nullptr;
  if (!cmd_) return h;
  h.redis_up = cmd_->up() && sub_->up();
  h.status = !cmd_->up() ? cmd_->status() : !sub_->up() ? sub_->status() : "up";
  {
    util::MutexLock lk(mu_);
    h.synced = synced_;
  }
  // A first read of the ended sessions that failed (Redis slow to answer)
  // is tried again whenever someone asks.
  if (!h.synced && h.redis_up) on_state();
  return h;
}

// --- sessions -----------------------------------------------------------

Result<std::string> Cluster::seal(const transport::SealedSession& s) {
  if (!sealer_) return Error{"cluster.secret is not set"};
  return sealer_->seal(s);
}

std::variant<transport::SealedSession, transport::OpenRefusal> Cluster::open(std::string_view id) {
  if (!sealer_) return transport::OpenRefusal{};
  auto s = sealer_->open(id, unix_now());
  if (!s) return transport::OpenRefusal{};
  std::string digest = digest_of(id);
  util::MutexLock lk(mu_);
  if (ended_.count(digest)) return transport::OpenRefusal{};
  if (cmd_ && !synced_)
    return transport::OpenRefusal{
        true, "Service Unavailable: " + (cmd_->up() ? std::string("Redis at " + shown_ + " is being read")
                                                     : cmd_->status()) +
                  "; this replica cannot yet tell whether the session was ended (DELETE)"};
  return *s;
}

std::int64_t Cluster::expiry_of(std::string_view id) const {
  auto s = sealer_ ? sealer_->open(id, unix_now()) : std::nullopt;
  return (s ? s->created : unix_now()) + ttl_s_;
}

std::optional<std::string> Cluster::mark_ended(const std::string& digest, std::int64_t expires) {
  util::MutexLock lk(mu_);
  std::int64_t now = unix_now();
  for (auto it = ended_.begin(); it != ended_.end();) {
    if (it->second < now) it = ended_.erase(it);
    else ++it;
  }
  if (expires >= now) ended_[digest] = expires;
  auto it = held_.find(digest);
  return it == held_.end() ? std::nullopt : std::optional<std::string>(it->second);
}


void Cluster::finish(const std::shared_ptr<EndWaiter>& w, const char* why) {
  {
    util::MutexLock lk(mu_);
    auto it = std::find(waiters_.begin(), waiters_.end(), w);
    if (it == waiters_.end()) return;
    waiters_.erase(it);
  }
  w->timer.cancel();
  if (why) spdlog::warn("cluster: session {}…: {}", w->digest.substr(0, 8), why);
  w->done({});
}

void Cluster::confirmed(const std::string& digest) {
  std::vector<std::shared_ptr<EndWaiter>> complete;
  {
    util::MutexLock lk(mu_);
    for (const auto& w : waiters_)
      if (w->digest == digest && ++w->confirmations >= w->needed && w->needed >= 0) complete.push_back(w);
  }
  for (const auto& w : complete) finish(w, nullptr);
}

void Cluster::end(const std::string& id, std::function<void(Result<void>)> done) {
  std::string digest = digest_of(id);
  std::int64_t expires = expiry_of(id);
  if (!cmd_) {
    // No Redis: the end holds on this replica only (docs/operations.md, "Scale-out").
    mark_ended(digest, expires);
    done({});
    return;
  }
  std::string when = std::to_string(expires);
  // Acknowledged once every replica confirmed it dropped its copy: a
  // request sent after the DELETE's answer is refused wherever it lands.
  auto waiter = std::make_shared<EndWaiter>(io_, digest, std::move(done));
  cmd_->command(
      {"ZADD", kEnded, when, digest},
      [this, digest, expires, when, waiter](Result<RedisReply> r) {
        if (auto why = refused(r)) {
          waiter->done(Error{"Service Unavailable: the session was not ended: " + *why});
          return;
        }
        mark_ended(digest, expires);
        {
          // Before the PUBLISH: confirmations may overtake its reply.
          util::MutexLock lk(mu_);
          waiters_.push_back(waiter);
        }
        waiter->timer.expires_after(kConfirmWithin);
        waiter->timer.async_wait([this, waiter](boost::system::error_code ec) {
          if (!ec) finish(waiter, "not every replica confirmed the end in time; the others read it when they reconnect");
        });
        cmd_->command({"PUBLISH", kEvents, "ended " + digest + " " + when}, [this, waiter](Result<RedisReply> p) {
          if (auto why = refused(p)) {
            // Recorded already: a replica that misses the message reads
            // the set when it reconnects.
            finish(waiter, "announcing the end failed");
            return;
          }
          bool complete;
          {
            util::MutexLock lk(mu_);
            waiter->needed = p->integer;
            complete = waiter->confirmations >= waiter->needed;
          }
          if (complete) finish(waiter, nullptr);
        });
      },
      kTimeout);
}

void Cluster::on_ended_elsewhere(std::function<void(const std::string& id)> drop) {
  util::MutexLock lk(mu_);
  drop_ = std::move(drop);
}

void Cluster::held(const std::string& id) {
  std::string digest = digest_of(id);
  bool ended;
  std::function<void(const std::string&)> drop;
  {
    util::MutexLock lk(mu_);
    held_[digest] = id;
    // Restored while its end was on the way: the copy goes at once.
    ended = ended_.count(digest) > 0;
    drop = drop_;
  }
  if (ended) {
    if (drop) drop(id);
    return;
  }
  if (!cmd_) return;
  // A session another replica began may have asked for a log level there.
  cmd_->command({"HGET", session_key(digest), "log"}, [this, id](Result<RedisReply> r) {
    if (!r || r->type != RedisReply::Type::String) return;
    std::function<void(const std::string&, const std::string&)> hook;
    {
      util::MutexLock lk(mu_);
      hook = hooks_.log_level;
    }
    if (hook) hook(id, r->text);
  });
}

void Cluster::released(const std::string& id) {
  util::MutexLock lk(mu_);
  held_.erase(digest_of(id));
}

// --- events -------------------------------------------------------------

void Cluster::on_event(const std::string& payload) {
  std::istringstream in(payload);
  std::string kind, digest, arg;
  in >> kind >> digest >> arg;
  if (kind == "ended") {
    std::int64_t expires = 0;
    try {
      expires = std::stoll(arg);
    } catch (const std::exception&) {
      return;
    }
    auto id = mark_ended(digest, expires);
    std::function<void(const std::string&)> drop;
    {
      util::MutexLock lk(mu_);
      drop = drop_;
    }
    if (id && drop) drop(*id);
    // Dropped (or never held): the replica that ended it may answer.
    cmd_->command({"PUBLISH", kEvents, "dropped " + digest}, nullptr);
    return;
  }
  if (kind == "dropped") {
    confirmed(digest);
    return;
  }
  if (kind == "oauth") {
    oauth_changed(digest);
    return;
  }
  if (kind == "pins") {
    pins_changed();
    return;
  }
  if (kind == "task" || kind == "answers" || kind == "cancel") {
    std::function<void(const std::string&, const std::string&, const std::string&)> hook;
    {
      util::MutexLock lk(mu_);
      hook = hooks_.task;
    }
    if (!hook) return;
    std::string payload;
    if (kind == "answers") payload = unbase64url(arg).value_or("");
    hook(digest, kind, payload);
    return;
  }
  std::optional<std::string> id;
  Hooks hooks;
  {
    util::MutexLock lk(mu_);
    if (auto it = held_.find(digest); it != held_.end()) id = it->second;
    hooks = hooks_;
  }
  if (!id) return;
  if (kind == "log" && hooks.log_level && !arg.empty()) hooks.log_level(*id, arg);
  else if (kind == "subs" && hooks.subscriptions_changed) hooks.subscriptions_changed(*id);
}

void Cluster::on_state() {
  if (!cmd_ || !cmd_->up() || !sub_->up()) return;
  // Whatever changed while this replica could not hear it.
  pins_changed();
  {
    util::MutexLock lk(mu_);
    if (syncing_) return;
    syncing_ = true;
  }
  sync_ended();
}

void Cluster::sync_ended() {
  std::vector<std::string> repair{"ZADD", kEnded};
  {
    util::MutexLock lk(mu_);
    for (const auto& [digest, expires] : ended_) {
      repair.push_back(std::to_string(expires));
      repair.push_back(digest);
    }
  }
  std::string now = std::to_string(unix_now());
  auto failed = [this](const std::string& why) {
    spdlog::warn("cluster: reading the ended sessions failed: {}", why);
    util::MutexLock lk(mu_);
    syncing_ = false;
  };
  cmd_->command({"ZREMRANGEBYSCORE", kEnded, "-inf", "(" + now}, nullptr);
  if (repair.size() > 2) cmd_->command(repair, nullptr);
  cmd_->command({"ZRANGE", kEnded, "0", "-1", "WITHSCORES"}, [this, failed](Result<RedisReply> r) {
    if (auto why = refused(r)) return failed(*why);
    std::vector<std::string> drop;
    std::function<void(const std::string&)> dropper;
    {
      util::MutexLock lk(mu_);
      for (std::size_t i = 0; i + 1 < r->items.size(); i += 2) {
        std::int64_t expires = 0;
        try {
          expires = std::stoll(r->items[i + 1].text);
        } catch (const std::exception&) {
          continue;
        }
        ended_[r->items[i].text] = expires;
        if (auto it = held_.find(r->items[i].text); it != held_.end()) drop.push_back(it->second);
      }
      synced_ = true;
      syncing_ = false;
      dropper = drop_;
    }
    spdlog::info("cluster: {} ended sessions known", r->items.size() / 2);
    if (dropper)
      for (const auto& id : drop) dropper(id);
  });
}

// --- shared per-session state -------------------------------------------

Task<Result<bool>> Cluster::use_once(const std::string& kind, const std::string& id, std::int64_t expires) {
  if (!cmd_) co_return true;
  // Awaited, not waited for: the Redis connection may live on the worker
  // the resuming call runs on.
  std::vector<std::string> args{"SET", "mcpgw:used:" + kind + ":" + id, "1", "NX", "EXAT",
                                std::to_string(std::max(expires, unix_now() + 1))};
  auto r = co_await cmd_->call(std::move(args), kTimeout);
  if (auto why = refused(r)) co_return Error{*why};
  co_return r->type == RedisReply::Type::Status;
}

void Cluster::share_log_level(const std::string& id, const std::string& level) {
  if (!cmd_) return;
  std::string digest = digest_of(id);
  std::string key = session_key(digest);
  auto warn = [](Result<RedisReply> r) {
    if (auto why = refused(r)) spdlog::warn("cluster: sharing a log level failed: {}", *why);
  };
  cmd_->command({"HSET", key, "log", level}, warn);
  cmd_->command({"EXPIREAT", key, std::to_string(expiry_of(id))}, nullptr);
  cmd_->command({"PUBLISH", kEvents, "log " + digest + " " + level}, nullptr);
}

Task<Result<void>> Cluster::set_subscription(std::string id, std::string uri, bool on) {
  if (!cmd_) co_return Result<void>{};
  std::string digest = digest_of(id);
  std::string key = subs_key(digest);
  // The commands are built before the co_await: GCC 12 cannot have an
  // initializer list inside its expression.
  std::vector<std::string> change{on ? "SADD" : "SREM", key, uri};
  auto r = co_await cmd_->call(std::move(change), kTimeout);
  if (auto why = refused(r)) co_return Error{*why};
  cmd_->command({"EXPIREAT", key, std::to_string(expiry_of(id))}, nullptr);
  std::vector<std::string> publish{"PUBLISH", kEvents, "subs " + digest};
  auto p = co_await cmd_->call(std::move(publish), kTimeout);
  if (auto why = refused(p)) co_return Error{*why};
  co_return Result<void>{};
}

void Cluster::subscriptions(const std::string& id, std::function<void(Result<std::vector<std::string>>)> done) {
  if (!cmd_) return done(std::vector<std::string>{});
  cmd_->command({"SMEMBERS", subs_key(digest_of(id))}, [done = std::move(done)](Result<RedisReply> r) {
    if (auto why = refused(r)) return done(Error{*why});
    std::vector<std::string> uris;
    for (const auto& item : r->items) uris.push_back(item.text);
    done(std::move(uris));
  });
}

// --- tasks --------------------------------------------------------------

void Cluster::put_task(const std::string& id, const std::string& principal, std::string state, std::int64_t expires,
                       bool listed, std::function<void(Result<void>)> done) {
  if (!cmd_) {
    if (done) done(Error{"cluster.redis is not set"});
    return;
  }
  std::string digest = digest_of(id);
  std::string when = std::to_string(expires);
  if (listed) list_task(id, principal, expires);
  cmd_->command({"SET", task_key(digest), std::move(state), "EXAT", when}, [this, digest, done](Result<RedisReply> r) {
    if (auto why = refused(r)) {
      if (done) done(Error{*why});
      return;
    }
    cmd_->command({"PUBLISH", kEvents, "task " + digest}, nullptr);
    if (done) done({});
  });
}

void Cluster::get_task(const std::string& id, std::function<void(Result<std::string>)> done) {
  if (!cmd_) return done(Error{"cluster.redis is not set"});
  cmd_->command({"GET", task_key(digest_of(id))}, [done = std::move(done)](Result<RedisReply> r) {
    if (auto why = refused(r)) return done(Error{*why});
    done(r->type == RedisReply::Type::String ? r->text : std::string());
  });
}

void Cluster::to_task(const std::string& id, const std::string& kind, const std::string& answers) {
  if (!cmd_) return;
  std::string message = kind + " " + digest_of(id) + (answers.empty() ? "" : " " + base64url(answers));
  cmd_->command({"PUBLISH", kEvents, std::move(message)}, [](Result<RedisReply> r) {
    if (auto why = refused(r)) spdlog::warn("cluster: telling a task's replica failed: {}", *why);
  });
}

void Cluster::list_task(const std::string& id, const std::string& principal, std::int64_t expires) {
  if (!cmd_) return;
  std::string key = principal_tasks_key(principal);
  cmd_->command({"ZADD", key, std::to_string(expires), id}, nullptr);
  cmd_->command({"ZREMRANGEBYSCORE", key, "-inf", "(" + std::to_string(unix_now())}, nullptr);
  // The set lives as long as its last task: NX for a new set, GT later.
  cmd_->command({"EXPIREAT", key, std::to_string(expires), "NX"}, nullptr);
  cmd_->command({"EXPIREAT", key, std::to_string(expires), "GT"}, nullptr);
}

void Cluster::tasks_of(const std::string& principal, std::function<void(Result<std::vector<std::string>>)> done) {
  if (!cmd_) return done(std::vector<std::string>{});
  cmd_->command({"ZRANGEBYSCORE", principal_tasks_key(principal), std::to_string(unix_now()), "+inf"},
                [done = std::move(done)](Result<RedisReply> r) {
                  if (auto why = refused(r)) return done(Error{*why});
                  std::vector<std::string> ids;
                  for (const auto& item : r->items) ids.push_back(item.text);
                  done(std::move(ids));
                });
}

}  // namespace mcpgw::cluster
