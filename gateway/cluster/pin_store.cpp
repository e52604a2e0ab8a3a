// The pinned tool definitions in Redis (integrity.pins with cluster.redis):
// one hash, a field per server and tool, shared by every replica and by
// `mcpgw pins approve`; each write is announced on the cluster's channel
// so that the replicas read the pins again.
#include "cluster/cluster.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::cluster {

namespace {

/// The field of a server's tool in kPins (a server name holds no newline).
std::string field_of(const std::string& server, const std::string& tool) { return server + "\n" + tool; }

}  // namespace

Result<integrity::Ledger> ledger_of(const RedisReply& r) {
  integrity::Ledger l;
  if (r.type == RedisReply::Type::Error) return Error{"Redis refused the command: " + r.text};
  if (r.type != RedisReply::Type::Array) return l;
  for (std::size_t i = 0; i + 1 < r.items.size(); i += 2) {
    const std::string& field = r.items[i].text;
    auto nl = field.find('\n');
    if (nl == std::string::npos) continue;
    auto value = json::parse(r.items[i + 1].text);
    if (!value) return Error{"Redis key " + std::string(kPins) + " field " + field + ": not JSON"};
    l.servers[field.substr(0, nl)][field.substr(nl + 1)] = integrity::record_from_json(*value);
  }
  return l;
}

std::vector<std::string> pins_command(const std::vector<integrity::Change>& changes) {
  std::vector<std::string> args{"HSET", kPins};
  for (const auto& c : changes) {
    json::Document d;
    json::Value v = integrity::record_to_json(c.record, d.GetAllocator());
    args.push_back(field_of(c.server, c.tool));
    args.push_back(json::write(v));
  }
  return args;
}

class Cluster::PinStore final : public integrity::Store {
 public:
  PinStore(Redis& redis, std::string shown) : redis_(redis), shown_(std::move(shown)) {}

  void load(std::function<void(Result<integrity::Ledger>)> done) override {
    redis_.command({"HGETALL", kPins}, [done = std::move(done)](Result<RedisReply> r) {
      if (!r) return done(Error{r.error()});
      done(ledger_of(*r));
    });
  }

  void save(std::vector<integrity::Change> changes, std::function<void(Result<void>)> done) override {
    if (changes.empty()) {
      if (done) done(Result<void>{});
      return;
    }
    redis_.command(pins_command(changes), [this, done = std::move(done)](Result<RedisReply> r) {
      if (r && r->type == RedisReply::Type::Error) r = Error{"Redis refused the command: " + r->text};
      if (!r) {
        if (done) done(Error{r.error()});
        return;
      }
      // Done once the replicas were told: `mcpgw pins approve` exits when
      // done, and a PUBLISH still queued then never reaches them. (The pins
      // are written either way; a replica reads them again on reconnect.)
      redis_.command({"PUBLISH", kEvents, "pins"}, [done](Result<RedisReply>) {
        if (done) done(Result<void>{});
      });
    });
  }

  void watch(std::function<void()> changed) override {
    util::MutexLock lk(mu_);
    changed_ = std::move(changed);
  }

  void stop() override {
    util::MutexLock lk(mu_);
    changed_ = nullptr;
  }

  std::string describe() const override { return "Redis at " + shown_; }

  void told() {
    util::MutexLock lk(mu_);
    if (changed_) changed_();
  }

 private:
  Redis& redis_;
  std::string shown_;
  util::Mutex mu_;
  std::function<void()> changed_ GUARDED_BY(mu_);
};

std::shared_ptr<integrity::Store> Cluster::pin_store() {
  util::MutexLock lk(mu_);
  if (!cmd_) return nullptr;
  if (!pins_) pins_ = std::make_shared<PinStore>(*cmd_, shown_);
  return pins_;
}

void Cluster::pins_changed() {
  std::shared_ptr<PinStore> pins;
  {
    util::MutexLock lk(mu_);
    pins = pins_;
  }
  if (pins) pins->told();
}

}  // namespace mcpgw::cluster
