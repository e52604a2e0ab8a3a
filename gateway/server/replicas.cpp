// The router's side of a cluster (docs/operations.md, "Scale-out"): sessions another
// replica began, served here from their sealed ids; their log level and
// resource subscriptions as the cluster holds them. The replica holding a
// session's GET stream holds its upstream subscriptions, so the updates
// arrive where they can be delivered.
#include <spdlog/spdlog.h>

#include "server/router.hpp"

namespace mcpgw::server {

void Router::set_cluster(cluster::Cluster& cluster) {
  services_.cluster = &cluster;
  cluster::Cluster::Hooks hooks;
  hooks.log_level = [this](const std::string& id, const std::string& level) {
    if (mcp::log_level_rank(level) < 0) return;
    if (auto s = sessions_.find(id)) {
      s->set_log_level(level);
      sessions_.update_log_level();
    }
  };
  hooks.subscriptions_changed = [this](const std::string& id) {
    if (auto s = sessions_.find(id); s && s->stream_here()) load_subscriptions(s);
  };
  hooks.task = [this](const std::string& digest, const std::string& kind, const std::string& payload) {
    task_share_.on_event(digest, kind, payload);
  };
  task_share_.set_cluster(cluster);
  cluster.set_hooks(std::move(hooks));
}

Result<std::shared_ptr<transport::Session>> Router::resume_session(const transport::ClientContext& ctx,
                                                                   const transport::SealedSession& sealed) {
  auto opened = open_session(ctx);
  if (!opened) return opened;
  auto s = std::static_pointer_cast<McpSession>(*opened);
  auto caps = json::parse(sealed.capabilities);
  auto info = json::parse(sealed.client_info);
  std::string name = info ? std::string(json::get_string(*info, "name").value_or("")) : std::string();
  s->initialize(sealed.protocol_version, caps ? &*caps : nullptr, std::move(name));
  // Requests come after initialized: the client sent it, wherever it landed.
  s->mark_initialized();
  return opened;
}

void Router::stream_opened(const std::shared_ptr<transport::Session>& session) {
  auto s = std::static_pointer_cast<McpSession>(session);
  s->set_stream_here(true);
  if (services_.cluster && services_.cluster->redis()) load_subscriptions(s);
}

void Router::stream_closed(const std::shared_ptr<transport::Session>& session) {
  auto s = std::static_pointer_cast<McpSession>(session);
  s->set_stream_here(false);
  if (!services_.cluster || !services_.cluster->redis()) return;
  // The replica where the client opens its next stream subscribes then.
  spawn("dropping the subscriptions of session " + s->id().substr(0, 8), [this, s]() -> Task<> {
    if (!s->stream_here()) co_await subscriptions_.drop(s);
  });
}

void Router::load_subscriptions(const std::shared_ptr<McpSession>& s) {
  std::weak_ptr<McpSession> weak = s;
  services_.cluster->subscriptions(s->id(), [this, weak](Result<std::vector<std::string>> uris) {
    auto s = weak.lock();
    if (!s) return;
    if (!uris) {
      spdlog::warn("session {}: cannot load its resource subscriptions: {}", s->id().substr(0, 8), uris.error());
      return;
    }
    // This runs on an I/O thread, and upstream (un)subscribe requests are
    // awaited: by a coroutine.
    auto load = [this, s, uris = std::move(*uris)]() -> Task<> {
      if (s->stream_here()) co_await subscriptions_.replace(s, uris);
    };
    spawn("loading the subscriptions of session " + s->id().substr(0, 8), std::move(load));
  });
}

}  // namespace mcpgw::server
