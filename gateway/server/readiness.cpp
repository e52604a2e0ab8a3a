// /readyz: whether this process can serve every client (docs/operations.md,
// "Endpoints"): its required servers, its plugins, and what it shares with
// the other replicas.
#include "server/gateway.hpp"

namespace mcpgw::server {

transport::SimpleResponse Gateway::readiness() {
  json::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  json::Value down(rapidjson::kArrayType);
  for (const auto& u : upstreams()) {
    if (!u->config().required || u->ready()) continue;
    json::Value e(rapidjson::kObjectType);
    e.AddMember("server", json::str(u->name(), a), a);
    e.AddMember("status", json::str(u->status(), a), a);
    down.PushBack(e, a);
  }
  // Breakers do not decide readiness (an open one fails its server's calls
  // fast, the rest works), but the ones not closed show here.
  json::Value circuits(rapidjson::kArrayType);
  for (const auto& u : upstreams()) {
    if (u->circuit() == upstream::Breaker::State::Closed) continue;
    json::Value e(rapidjson::kObjectType);
    e.AddMember("server", json::str(u->name(), a), a);
    e.AddMember("state", json::str(upstream::state_name(u->circuit()), a), a);
    circuits.PushBack(e, a);
  }
  // A plugin whose host keeps failing at start is down like a required
  // server: its tools answer only with that error.
  for (const auto& p : plugins()) {
    const std::string why = p->down();
    if (why.empty()) continue;
    json::Value e(rapidjson::kObjectType);
    e.AddMember("plugin", json::str(p->name(), a), a);
    e.AddMember("status", json::str("down: " + why, a), a);
    down.PushBack(e, a);
  }
  bool ready = down.Empty();
  // Calls go on while Redis is down (what needs it fails with an error
  // naming it), so that alone keeps a replica ready; a replica that never
  // read the ended sessions cannot serve others' sessions, so it is not.
  if (auto h = cluster_->health(); h.redis_configured) {
    d.AddMember("redis", json::str(h.status, a), a);
    if (cluster_->sealing() && !h.synced) {
      json::Value e(rapidjson::kObjectType);
      e.AddMember("redis", json::str(h.status, a), a);
      e.AddMember("status", json::str(h.redis_up ? "reading the ended sessions" : h.status, a), a);
      down.PushBack(e, a);
      ready = false;
    }
  }
  d.AddMember("ready", ready, a);
  d.AddMember("down", down, a);
  d.AddMember("circuits", circuits, a);
  return transport::SimpleResponse{ready ? 200 : 503, "application/json", json::write(d), {}};
}

}  // namespace mcpgw::server
