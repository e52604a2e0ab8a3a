// A server and its links: the shared link, the per-client and
// per-principal links made on a caller's first use, what the server says
// of itself (through its shared link, or as a per-principal server that
// has none), stopping and draining.
#include "upstream/upstream.hpp"

#include <boost/asio/strand.hpp>
#include <spdlog/spdlog.h>

#include "util/offload.hpp"

namespace mcpgw::upstream {
namespace {

using Clock = std::chrono::steady_clock;

/// Per-client links one per_client server may have: each may be a child
/// process, and sessions are cheap to open.
constexpr std::size_t kMaxClientLinks = 256;

}  // namespace

Upstream::Upstream(config::Server cfg, transport::Io& io, Listener& listener, std::shared_ptr<oauth::Client> oauth)
    : cfg_(std::move(cfg)),
      io_(io),
      listener_(listener),
      oauth_(std::move(oauth)),
      shared_(oauth_ && oauth_->per_principal()
                  ? nullptr
                  : std::make_shared<Link>(cfg_, io_, listener_, oauth_, Link::Role::Shared)),
      breaker_(cfg_.circuit),
      limiter_(cfg_.max_concurrency) {
  if (cfg_.transport == config::Server::Transport::Http && !cfg_.tls.verify)
    spdlog::warn("upstream {}: tls.verify is false: its certificate is not checked, so anyone on the way to {} can "
                 "read and change its traffic",
                 cfg_.name, cfg_.url);
}

Upstream::~Upstream() { stop(); }

void Upstream::start() {
  {
    util::MutexLock lk(mu_);
    if (stopping_) return;
    started_ = true;
    started_at_ = Clock::now();
  }
  if (shared_) {
    shared_->start();
    return;
  }
  spdlog::info("upstream {}: connected per principal (grant {})", cfg_.name, oauth_->grant_name());
  listener_.on_health(cfg_.name, true);
}

void Upstream::wait_first_attempt(std::chrono::milliseconds timeout) {
  block_on(asio::make_strand(io_.executor()), first_attempt(Clock::now() + timeout), [] {});
}

Task<> Upstream::first_attempt(Clock::time_point deadline) {
  if (shared_) co_await shared_->first_attempt(deadline);
}

std::string Upstream::owner_key(const CallOptions& opts) const {
  const Caller* c = opts.caller;
  if (cfg_.session == config::Server::Session::PerClient && c && !c->session.empty()) return "s:" + c->session;
  if (per_principal()) return "p:" + (c ? c->principal : std::string());
  return {};
}

Task<Result<std::shared_ptr<Link>>> Upstream::link_for(const CallOptions& opts) {
  const std::string key = owner_key(opts);
  if (key.empty()) co_return shared_;
  std::shared_ptr<Link> link, ended;
  {
    util::MutexLock lk(links_mu_);
    auto it = links_.find(key);
    // A principal's link gives up when it cannot connect (its token went):
    // the next call makes a new one.
    if (it != links_.end() && it->second->supervising()) {
      link = it->second;
    } else {
      if (it != links_.end()) {
        ended = std::move(it->second);
        links_.erase(it);
      }
      if (links_.size() >= kMaxClientLinks)
        co_return Error{"mcpgw: upstream '" + cfg_.name + "' has " + std::to_string(kMaxClientLinks) +
                        " per-client (or per-principal) connections already; try again when sessions have ended"};
      const bool per_client = key[0] == 's';
      Owner owner{opts.caller ? opts.caller->protocol : "", opts.caller ? opts.caller->principal : ""};
      json::Document client_caps = opts.client ? opts.client->capabilities() : json::Document(rapidjson::kObjectType);
      std::function<void(std::shared_ptr<const Listing>)> on_listed;
      if (!per_client)
        on_listed = [weak = weak_from_this()](std::shared_ptr<const Listing> l) {
          if (auto self = weak.lock()) self->adopt(std::move(l));
        };
      link = std::make_shared<Link>(cfg_, io_, listener_, oauth_, per_client ? Link::Role::Client : Link::Role::Principal,
                                    std::move(owner), per_client ? json::find(client_caps, "extensions") : nullptr,
                                    std::move(on_listed));
      links_.emplace(key, link);
      if (std::string level = log_level(); !level.empty()) link->set_log_level(std::move(level));
      link->start();
      if (per_client)
        spdlog::info("upstream {}: connection for client session {} started", cfg_.name, key.substr(2, 8));
      else
        spdlog::info("upstream {}: connection for principal {} started", cfg_.name,
                     key.size() > 2 ? key.substr(2) : "-");
    }
  }
  if (ended) ended->stop();
  // The first call of a session waits for its link, within its deadline.
  co_await link->first_attempt(opts.deadline);
  co_return link;
}

Task<> Upstream::prepare(const CallOptions& opts) {
  if (!owner_key(opts).empty()) co_await link_for(opts);
}

Task<bool> Upstream::wait_settled(Clock::time_point deadline) {
  if (!shared_) co_return ready();
  co_return co_await shared_->wait_settled(deadline);
}

Task<> Upstream::end_client(std::string session) {
  std::shared_ptr<Link> link;
  {
    util::MutexLock lk(links_mu_);
    auto it = links_.find("s:" + session);
    if (it == links_.end()) co_return;
    link = std::move(it->second);
    links_.erase(it);
  }
  co_await link->stop_async();
  spdlog::info("upstream {}: connection for client session {} stopped", cfg_.name, session.substr(0, 8));
}

void Upstream::end_principal(const std::string& principal) {
  std::vector<std::shared_ptr<Link>> ended;
  {
    util::MutexLock lk(links_mu_);
    for (auto it = links_.begin(); it != links_.end();) {
      if (it->second->role() == Link::Role::Principal && it->second->principal() == principal) {
        ended.push_back(std::move(it->second));
        it = links_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& link : ended) link->stop();
  if (!ended.empty())
    spdlog::info("upstream {}: {} connection(s) of principal {} stopped", cfg_.name, ended.size(),
                 principal.empty() ? "-" : principal);
}

std::optional<UpstreamIdentity> Upstream::identity_for(const Caller* caller) const {
  if (!oauth_) return std::nullopt;
  return UpstreamIdentity{std::string(oauth_->grant_name()), oauth_->identity(caller ? caller->principal : "")};
}

void Upstream::adopt(std::shared_ptr<const Listing> listing) {
  {
    util::MutexLock lk(mu_);
    if (adopted_ == listing) return;
    adopted_ = std::move(listing);
  }
  listener_.on_tools_changed(cfg_.name);
}

void Upstream::begin_stop() {
  {
    util::MutexLock lk(mu_);
    stopping_ = true;
  }
  changed_.notify();
}

std::map<std::string, std::shared_ptr<Link>> Upstream::take_links() {
  std::map<std::string, std::shared_ptr<Link>> links;
  util::MutexLock lk(links_mu_);
  links.swap(links_);
  return links;
}

void Upstream::stop() {
  begin_stop();
  if (shared_) shared_->stop();
  for (auto& [key, link] : take_links()) link->stop();
}

Task<> Upstream::stop_async(std::string reason) {
  if (shared_) shared_->set_stop_reason(reason);
  {
    util::MutexLock lk(links_mu_);
    for (auto& [key, link] : links_) link->set_stop_reason(reason);
  }
  co_await stop_async();
}

Task<> Upstream::stop_async() {
  begin_stop();
  if (shared_) co_await shared_->stop_async();
  for (auto& [key, link] : take_links()) co_await link->stop_async();
}

Upstream::InFlight::InFlight(Upstream& u) : u_(u) { ++u_.in_flight_; }

Upstream::InFlight::~InFlight() {
  if (--u_.in_flight_ == 0 && u_.draining_) u_.changed_.notify();
}

Task<> Upstream::drain(Clock::time_point deadline) {
  draining_ = true;
  for (;;) {
    const auto seen = changed_.generation();
    {
      util::MutexLock lk(mu_);
      if (in_flight_ == 0 || stopping_) co_return;
    }
    if (!co_await changed_.wait(seen, deadline)) co_return;
  }
}

void Upstream::set_log_level(std::string level) {
  {
    util::MutexLock lk(mu_);
    log_level_ = level;
  }
  if (shared_) shared_->set_log_level(level);
  util::MutexLock lk(links_mu_);
  for (auto& [key, link] : links_) link->set_log_level(level);
}

std::string Upstream::log_level() const {
  util::MutexLock lk(mu_);
  return log_level_;
}

bool Upstream::has_tool(std::string_view tool) const {
  auto l = listing();
  for (const auto& t : l->tools.GetArray())
    if (json::get_string(t, "name") == tool) return true;
  return false;
}

bool Upstream::ready() const {
  if (shared_) return shared_->ready();
  util::MutexLock lk(mu_);
  return started_ && !stopping_;
}

std::string Upstream::status() const {
  if (shared_) return shared_->status();
  util::MutexLock lk(mu_);
  if (stopping_) return "stopped";
  if (!started_) return "connecting";
  return "connected per principal (grant " + std::string(oauth_->grant_name()) + ")";
}

Upstream::State Upstream::state() const {
  if (shared_) return shared_->state();
  util::MutexLock lk(mu_);
  return stopping_ ? State::Down : started_ ? State::Connected : State::Connecting;
}

bool Upstream::settled() const {
  if (shared_) return shared_->settled();
  util::MutexLock lk(mu_);
  return started_ || stopping_;
}

Clock::time_point Upstream::started_at() const {
  util::MutexLock lk(mu_);
  return started_at_;
}

std::string Upstream::protocol() const { return shared_ ? shared_->protocol() : std::string(); }

Upstream::Trouble Upstream::last_trouble() const { return shared_ ? shared_->last_trouble() : Trouble{}; }

std::shared_ptr<const Listing> Upstream::listing() const {
  if (shared_) return shared_->listing();
  util::MutexLock lk(mu_);
  return adopted_;
}

void Upstream::inherit_listing(const Upstream& previous) {
  auto inherited = previous.listing();
  if (shared_) {
    shared_->inherit_listing(std::move(inherited));
    return;
  }
  util::MutexLock lk(mu_);
  if (!started_) adopted_ = std::move(inherited);
}

}  // namespace mcpgw::upstream
