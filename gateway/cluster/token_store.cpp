// The upstream OAuth tokens in Redis: every replica reads and writes the
// same sealed records, and each change is announced on the cluster's
// channel so that the replicas drop their cached copies.
#include "cluster/cluster.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::cluster {
namespace {

std::string record_key(const std::string& key) { return "mcpgw:oauth:" + key; }

/// A reply or why there is none, as a coroutine gets it.
struct Outcome {
  std::optional<RedisReply> reply;
  std::string error;
};

Task<Outcome> run(Redis& redis, std::vector<std::string> args) {
  Result<RedisReply> r = co_await redis.call(std::move(args));
  Outcome o;
  if (!r) o.error = r.error();
  else if (r->type == RedisReply::Type::Error) o.error = "Redis refused the command: " + r->text;
  else o.reply = std::move(*r);
  co_return o;
}

}  // namespace

class Cluster::TokenStore final : public oauth::TokenStore {
 public:
  TokenStore(Redis& redis, std::string shown) : redis_(redis), shown_(std::move(shown)) {}

  Task<Result<std::optional<std::string>>> load(const std::string& key) override {
    std::vector<std::string> args{"GET", record_key(key)};
    auto o = co_await run(redis_, std::move(args));
    if (!o.reply) co_return Error{o.error};
    if (o.reply->type != RedisReply::Type::String) co_return std::optional<std::string>();
    co_return std::optional<std::string>(std::move(o.reply->text));
  }

  Task<Result<void>> save(const std::string& key, const std::string& blob) override {
    std::vector<std::string> args{"SET", record_key(key), blob};
    co_return co_await changed(std::move(args), key);
  }

  Task<Result<void>> erase(const std::string& key) override {
    std::vector<std::string> args{"DEL", record_key(key)};
    co_return co_await changed(std::move(args), key);
  }

  Task<Result<bool>> use_once(const std::string& id, std::int64_t expires) override {
    std::vector<std::string> args{"SET", "mcpgw:used:oauth:" + id, "1", "NX", "EXAT",
                                  std::to_string(std::max(expires, unix_now() + 1))};
    auto o = co_await run(redis_, std::move(args));
    if (!o.reply) co_return Error{o.error};
    co_return o.reply->type == RedisReply::Type::Status;
  }

  std::string describe() const override { return "Redis at " + shown_; }

  void on_changed(std::function<void(const std::string& key)> fn) override {
    util::MutexLock lk(mu_);
    changed_ = std::move(fn);
  }

  void told(const std::string& key) {
    std::function<void(const std::string&)> fn;
    {
      util::MutexLock lk(mu_);
      fn = changed_;
    }
    if (fn) fn(key);
  }

 private:
  /// Runs a command that changes `key`'s record and tells the replicas.
  Task<Result<void>> changed(std::vector<std::string> args, const std::string& key) {
    auto o = co_await run(redis_, std::move(args));
    if (!o.reply) co_return Error{o.error};
    std::vector<std::string> publish{"PUBLISH", kEvents, "oauth " + key};
    co_await run(redis_, std::move(publish));
    co_return Result<void>{};
  }

  Redis& redis_;
  std::string shown_;
  util::Mutex mu_;
  std::function<void(const std::string&)> changed_ GUARDED_BY(mu_);
};

std::shared_ptr<oauth::TokenStore> Cluster::token_store() {
  util::MutexLock lk(mu_);
  if (!cmd_) return nullptr;
  if (!tokens_) tokens_ = std::make_shared<TokenStore>(*cmd_, shown_);
  return tokens_;
}

void Cluster::oauth_changed(const std::string& key) {
  std::shared_ptr<TokenStore> tokens;
  {
    util::MutexLock lk(mu_);
    tokens = tokens_;
  }
  if (tokens) tokens->told(key);
}

}  // namespace mcpgw::cluster
