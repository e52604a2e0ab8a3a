#include "server/sessions.hpp"

#include <algorithm>
#include <map>

#include "server/client_call.hpp"

namespace mcpgw::server {

McpSession::McpSession(std::string mode, bool stateless) : mode_(std::move(mode)), stateless_(stateless) {}

std::shared_ptr<McpSession> McpSession::for_request(const std::shared_ptr<McpSession>& parent,
                                                    const mcp::Envelope& envelope) {
  auto s = std::make_shared<McpSession>(parent->mode(), true);
  {
    // Not shared yet: the lock costs nothing and keeps the fields always under it.
    util::WriterLock lk(s->mu_);
    s->protocol_version_ = envelope.version;
    s->capabilities_ = json::clone(envelope.capabilities);
    s->client_name_ = envelope.client_name;
    s->client_version_ = envelope.client_version;
    s->log_level_ = envelope.log_level;
  }
  std::weak_ptr<McpSession> weak_parent = parent;
  s->bind(parent->id(), parent->context(), [weak_parent](std::string m) {
    auto p = weak_parent.lock();
    if (p) p->notify(std::move(m));
    return p != nullptr;
  });
  s->set_subject_token(parent->subject_token());
  return s;
}

void McpSession::initialize(std::string version, const json::Value* capabilities, std::string client_name,
                            std::string client_version) {
  util::WriterLock lk(mu_);
  protocol_version_ = std::move(version);
  if (capabilities && capabilities->IsObject()) {
    capabilities_ = json::clone(*capabilities);
  }
  client_name_ = std::move(client_name);
  client_version_ = std::move(client_version);
}

bool McpSession::negotiated() const {
  util::ReaderLock lk(mu_);
  return !protocol_version_.empty();
}

std::string McpSession::protocol_version() const {
  util::ReaderLock lk(mu_);
  return protocol_version_;
}

json::Document McpSession::capabilities() const {
  util::ReaderLock lk(mu_);
  return json::clone(capabilities_);
}

std::string McpSession::client_name() const {
  util::ReaderLock lk(mu_);
  return client_name_;
}

std::string McpSession::client_version() const {
  util::ReaderLock lk(mu_);
  return client_version_;
}

void McpSession::mark_initialized() {
  util::WriterLock lk(mu_);
  initialized_ = true;
}

bool McpSession::initialized() const {
  util::ReaderLock lk(mu_);
  return initialized_;
}

void McpSession::set_log_level(std::string level) {
  util::WriterLock lk(mu_);
  log_level_ = std::move(level);
  log_level_set_ = true;
}

std::string McpSession::log_level() const {
  util::ReaderLock lk(mu_);
  return log_level_;
}

std::pair<std::string, bool> McpSession::log_preference() const {
  util::ReaderLock lk(mu_);
  return {log_level_, log_level_set_};
}

void McpSession::track(const std::string& key, std::weak_ptr<transport::Exchange> ex) {
  util::MutexLock lk(inflight_mu_);
  inflight_[key] = std::move(ex);
}

void McpSession::untrack(const std::string& key) {
  util::MutexLock lk(inflight_mu_);
  inflight_.erase(key);
}

std::shared_ptr<transport::Exchange> McpSession::in_flight(const std::string& key) const {
  util::MutexLock lk(inflight_mu_);
  auto it = inflight_.find(key);
  return it == inflight_.end() ? nullptr : it->second.lock();
}

bool McpSession::await_answer(const std::string& id, std::weak_ptr<ClientCall> call, std::size_t max) {
  util::WriterLock lk(mu_);
  if (forwarded_.size() >= max) return false;
  forwarded_[id] = std::move(call);
  return true;
}

void McpSession::forget_answer(const std::string& id) {
  util::WriterLock lk(mu_);
  forwarded_.erase(id);
}

std::shared_ptr<ClientCall> McpSession::asker(const std::string& id) const {
  util::ReaderLock lk(mu_);
  auto it = forwarded_.find(id);
  return it == forwarded_.end() ? nullptr : it->second.lock();
}

void McpSession::end() {
  std::vector<std::shared_ptr<transport::Exchange>> running;
  {
    util::MutexLock lk(inflight_mu_);
    for (auto& [id, ex] : inflight_)
      if (auto e = ex.lock()) running.push_back(std::move(e));
  }
  // Cancel callbacks take upstream locks: run them outside the session's.
  for (auto& e : running) e->cancel();
  std::vector<std::shared_ptr<ClientCall>> asked;
  {
    util::ReaderLock lk(mu_);
    for (auto& [id, c] : forwarded_)
      if (auto call = c.lock()) asked.push_back(std::move(call));
  }
  for (auto& c : asked) c->abandon();
}

Sessions::Sessions(Metrics& metrics, std::function<void(const std::string&)> log_level)
    : metrics_(metrics), log_level_hook_(std::move(log_level)) {}

void Sessions::add(std::shared_ptr<McpSession> s) {
  util::MutexLock lk(mu_);
  live_.insert(std::move(s));
  metrics_.set_sessions(static_cast<double>(live_.size()));
}

void Sessions::remove(const std::shared_ptr<McpSession>& s) {
  {
    util::MutexLock lk(mu_);
    live_.erase(s);
    metrics_.set_sessions(static_cast<double>(live_.size()));
  }
  update_log_level();
}

std::shared_ptr<McpSession> Sessions::find(const std::string& id) {
  util::MutexLock lk(mu_);
  // Only cluster events look sessions up by id: rare enough for a scan.
  for (const auto& s : live_)
    if (s->id() == id) return s;
  return nullptr;
}

void Sessions::notify(const std::string& note, const std::function<bool(const McpSession&)>& wants) {
  std::vector<std::shared_ptr<McpSession>> live;
  {
    util::MutexLock lk(mu_);
    live.assign(live_.begin(), live_.end());
  }
  for (auto& s : live)
    if (wants(*s)) s->notify(note);
}

void Sessions::update_log_level() {
  if (!log_level_hook_) return;
  std::string wanted;
  bool asked = false;
  util::MutexLock lk(mu_);
  for (const auto& s : live_) {
    auto [level, set] = s->log_preference();
    asked = asked || set;
    if (wanted.empty() || mcp::log_level_rank(level) < mcp::log_level_rank(wanted)) wanted = level;
  }
  // Upstreams keep their own default until some client asks for a level;
  // then they are set to the most verbose level any session (asking or
  // not) takes.
  if (!asked || wanted.empty() || wanted == upstream_log_level_) return;
  upstream_log_level_ = wanted;
  log_level_hook_(wanted);
}

std::vector<std::pair<std::string, std::size_t>> Sessions::count_by_principal() {
  std::map<std::string, std::size_t> counts;
  {
    util::MutexLock lk(mu_);
    for (const auto& s : live_) ++counts[s->context().principal];
  }
  std::vector<std::pair<std::string, std::size_t>> out(counts.begin(), counts.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace mcpgw::server
