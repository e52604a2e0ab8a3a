#include "tasks/registry.hpp"

#include <algorithm>
#include <chrono>

#include "cluster/sealer.hpp"

namespace mcpgw::tasks {
namespace {

/// How long the record of an upstream task without a ttl is kept (its id
/// stays valid; only this process's listing and notifications forget it).
constexpr std::int64_t kUnlimitedKeepMs = 24LL * 3600 * 1000;

std::string upstream_key(const std::string& server, const std::string& upstream_id) {
  return server + "\n" + upstream_id;
}

}  // namespace

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TaskRegistry::Slot::Slot(Slot&& o) noexcept : registry_(o.registry_), principal_(std::move(o.principal_)) {
  o.registry_ = nullptr;
}

TaskRegistry::Slot& TaskRegistry::Slot::operator=(Slot&& o) noexcept {
  if (this != &o) {
    if (registry_) registry_->release(principal_);
    registry_ = o.registry_;
    principal_ = std::move(o.principal_);
    o.registry_ = nullptr;
  }
  return *this;
}

TaskRegistry::Slot::~Slot() {
  if (registry_) registry_->release(principal_);
}

TaskRegistry::TaskRegistry(const std::vector<std::string>& secrets)
    : secrets_(secrets), ids_(std::make_shared<const cluster::TaskIds>(secrets)) {}

void TaskRegistry::set_secrets(const std::vector<std::string>& secrets) {
  util::MutexLock lk(mu_);
  if (secrets == secrets_) return;
  secrets_ = secrets;
  ids_ = std::make_shared<const cluster::TaskIds>(secrets);
}

std::variant<TaskRegistry::Slot, std::int64_t> TaskRegistry::reserve(const std::string& principal, int max) {
  util::MutexLock lk(mu_);
  std::int64_t now = unix_ms();
  sweep(now);
  int& held = held_[principal];
  if (held >= max) {
    std::int64_t soonest = 0;
    for (const auto& [id, r] : by_id_)
      if (r->ref.principal == principal && (!soonest || r->keep_until_ms < soonest)) soonest = r->keep_until_ms;
    return std::max<std::int64_t>(soonest ? soonest - now : 1000, 1);
  }
  ++held;
  return Slot(this, principal);
}

void TaskRegistry::release(const std::string& principal) {
  util::MutexLock lk(mu_);
  if (auto it = held_.find(principal); it != held_.end() && --it->second <= 0) held_.erase(it);
}

Result<std::shared_ptr<TaskRecord>> TaskRegistry::add(Slot slot, cluster::TaskRef ref, std::string session,
                                                      std::shared_ptr<TaskRun> run) {
  auto record = std::make_shared<TaskRecord>();
  auto id = id_of(ref);
  if (!id) return Error{id.error()};
  record->id = std::move(*id);
  record->digest = cluster::digest_of(record->id);
  record->ref = std::move(ref);
  record->session = std::move(session);
  record->run = std::move(run);
  const cluster::TaskRef& r = record->ref;
  record->keep_until_ms = r.expires_ms ? r.expires_ms : r.created_ms + kUnlimitedKeepMs;
  record->updated_ms = r.created_ms;
  util::MutexLock lk(mu_);
  // The slot's count becomes the record's.
  slot.registry_ = nullptr;
  by_id_[record->id] = record;
  by_digest_[record->digest] = record->id;
  if (r.kind == cluster::TaskRef::Kind::Upstream) by_upstream_[upstream_key(r.server, r.upstream_id)] = record->id;
  return record;
}

Result<std::string> TaskRegistry::id_of(const cluster::TaskRef& ref) const {
  std::shared_ptr<const cluster::TaskIds> ids;
  {
    util::MutexLock lk(mu_);
    ids = ids_;
  }
  return ids->seal(ref);
}

std::variant<TaskRegistry::Opened, TaskRefusal> TaskRegistry::open(std::string_view id, const std::string& principal) {
  std::shared_ptr<const cluster::TaskIds> ids;
  std::shared_ptr<TaskRecord> local;
  {
    util::MutexLock lk(mu_);
    ids = ids_;
    if (auto it = by_id_.find(std::string(id)); it != by_id_.end()) local = it->second;
  }
  auto ref = ids->open(id);
  if (!ref || ref->principal != principal) return TaskRefusal::NotFound;
  if (ref->expires_ms && unix_ms() > ref->expires_ms) return TaskRefusal::Expired;
  return Opened{std::move(*ref), std::move(local)};
}

std::vector<std::shared_ptr<TaskRecord>> TaskRegistry::of(const std::string& principal) {
  util::MutexLock lk(mu_);
  sweep(unix_ms());
  std::vector<std::shared_ptr<TaskRecord>> out;
  for (const auto& [id, r] : by_id_)
    if (r->ref.principal == principal) out.push_back(r);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a->ref.created_ms < b->ref.created_ms; });
  return out;
}

std::shared_ptr<TaskRun> TaskRegistry::run_of(const TaskRecord& rec) const {
  util::MutexLock lk(mu_);
  return rec.run;
}

std::shared_ptr<TaskRun> TaskRegistry::run_of(TaskRecord& rec, const std::function<std::shared_ptr<TaskRun>()>& make) {
  util::MutexLock lk(mu_);
  if (!rec.run) rec.run = make();
  return rec.run;
}

std::shared_ptr<TaskRecord> TaskRegistry::by_digest(const std::string& digest) {
  util::MutexLock lk(mu_);
  auto it = by_digest_.find(digest);
  if (it == by_digest_.end()) return nullptr;
  auto r = by_id_.find(it->second);
  return r == by_id_.end() ? nullptr : r->second;
}

std::shared_ptr<TaskRecord> TaskRegistry::by_upstream(const std::string& server, const std::string& upstream_id) {
  util::MutexLock lk(mu_);
  auto it = by_upstream_.find(upstream_key(server, upstream_id));
  if (it == by_upstream_.end()) return nullptr;
  auto r = by_id_.find(it->second);
  return r == by_id_.end() ? nullptr : r->second;
}

void TaskRegistry::cancel_all() {
  std::vector<std::shared_ptr<TaskRun>> runs;
  {
    util::MutexLock lk(mu_);
    for (const auto& [id, r] : by_id_)
      if (r->run) runs.push_back(r->run);
  }
  for (const auto& run : runs) run->cancel();
}

std::size_t TaskRegistry::size() const {
  util::MutexLock lk(mu_);
  return by_id_.size();
}

void TaskRegistry::sweep(std::int64_t now_ms) {
  for (auto it = by_id_.begin(); it != by_id_.end();) {
    const auto& r = it->second;
    if (r->keep_until_ms > now_ms) {
      ++it;
      continue;
    }
    if (r->run) r->run->cancel();
    if (r->ref.kind == cluster::TaskRef::Kind::Upstream)
      by_upstream_.erase(upstream_key(r->ref.server, r->ref.upstream_id));
    if (auto h = held_.find(r->ref.principal); h != held_.end() && --h->second <= 0) held_.erase(h);
    by_digest_.erase(r->digest);
    it = by_id_.erase(it);
  }
}

}  // namespace mcpgw::tasks
