#include "server/subscriptions.hpp"

#include <boost/asio/strand.hpp>
#include <spdlog/spdlog.h>

#include <vector>

#include "mcp/era.hpp"
#include "server/methods.hpp"
#include "util/offload.hpp"

namespace mcpgw::server {

Subscriptions::Subscriptions(catalog::Catalog& catalog, Post post, asio::any_io_executor io)
    : catalog_(catalog), post_(std::move(post)), io_(std::move(io)) {}

void Subscriptions::subscribe(const std::shared_ptr<McpSession>& s, const catalog::Route& route,
                              const std::string& exposed) {
  bool changed;
  {
    std::lock_guard lk(mu_);
    changed = resources_[s].insert(exposed).second;
  }
  if (changed) count(route, 1);
}

void Subscriptions::unsubscribe(const std::shared_ptr<McpSession>& s, const catalog::Route& route,
                                const std::string& exposed) {
  bool changed = false;
  {
    std::lock_guard lk(mu_);
    if (auto it = resources_.find(s); it != resources_.end()) {
      changed = it->second.erase(exposed) > 0;
      if (it->second.empty()) resources_.erase(it);
    }
  }
  if (changed) count(route, -1);
}

void Subscriptions::drop(const std::shared_ptr<McpSession>& s) {
  std::set<std::string> uris;
  {
    std::lock_guard lk(mu_);
    if (auto it = resources_.find(s); it != resources_.end()) {
      uris.swap(it->second);
      resources_.erase(it);
    }
  }
  auto snap = catalog_.snapshot();
  for (const auto& uri : uris)
    if (auto route = snap->route_resource(uri)) count(*route, -1);
}

void Subscriptions::replace(const std::shared_ptr<McpSession>& s, const std::vector<std::string>& uris) {
  std::set<std::string> wanted(uris.begin(), uris.end());
  std::set<std::string> now;
  {
    std::lock_guard lk(mu_);
    if (auto it = resources_.find(s); it != resources_.end()) now = it->second;
  }
  auto snap = catalog_.snapshot();
  for (const auto& uri : now)
    if (!wanted.count(uri))
      if (auto route = snap->route_resource(uri)) unsubscribe(s, *route, uri);
  for (const auto& uri : wanted)
    if (!now.count(uri))
      if (auto route = snap->route_resource(uri)) subscribe(s, *route, uri);
}

void Subscriptions::count(const catalog::Route& r, int delta) {
  bool send;
  {
    std::lock_guard lk(mu_);
    int& n = upstream_[{r.origin.get(), r.upstream_key}];
    int before = n;
    n += delta;
    send = (before == 0 && n == 1) || (before == 1 && n == 0);
    if (n <= 0) upstream_.erase({r.origin.get(), r.upstream_key});
  }
  if (!send) return;
  // One upstream subscription serves every client subscribed to the
  // resource; the first subscribes, the last unsubscribes.
  json::Document p(rapidjson::kObjectType);
  p.AddMember("uri", json::str(r.upstream_key, p.GetAllocator()), p.GetAllocator());
  upstream::CallOptions o;
  o.deadline = r.origin->deadline();
  // The caller is a pool thread: the subscription is in place upstream
  // when the client is told it is.
  auto reply = block_on(asio::make_strand(io_),
                        r.origin->request(delta > 0 ? "resources/subscribe" : "resources/unsubscribe", p, o),
                        [] { return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw is shutting down"); });
  if (reply.rpc_error)
    spdlog::warn("upstream {}: {} {} failed: {}", r.origin->name(), delta > 0 ? "subscribe" : "unsubscribe",
                 r.upstream_key, json::write(reply.body));
}

void Subscriptions::listen(const std::shared_ptr<McpSession>& s, const jsonrpc::Id& id, ListenFilter filter,
                           std::shared_ptr<transport::Exchange> ex) {
  // The acknowledgement names what will be sent: what was asked for that
  // the gateway can tell.
  json::Document ack(rapidjson::kObjectType);
  auto& a = ack.GetAllocator();
  json::Value honoured(rapidjson::kObjectType);
  if (filter.tools) honoured.AddMember("toolsListChanged", true, a);
  if (filter.prompts) honoured.AddMember("promptsListChanged", true, a);
  if (filter.resources) honoured.AddMember("resourcesListChanged", true, a);
  auto snap = catalog_.snapshot();
  if (!filter.uris.empty()) {
    json::Value kept(rapidjson::kArrayType);
    for (const auto& u : filter.as_asked) kept.PushBack(json::str(u, a), a);
    honoured.AddMember("resourceSubscriptions", kept, a);
  }
  for (const auto& uri : filter.uris)
    if (auto route = snap->route_resource(uri)) count(*route, 1);
  ack.AddMember("notifications", honoured, a);
  // The id goes in as text: a number keeps the digits the client wrote.
  std::string params = json::write(ack);
  params.pop_back();
  params += ",\"_meta\":{\"" + std::string(mcp::kMetaSubscriptionId) + "\":" + std::string(id.json()) + "}}";
  ex->send(R"({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":)" + params + "}");
  {
    std::lock_guard lk(mu_);
    listens_[s] = Listen{std::string(id.json()), std::move(filter), ex, {}};
  }
  // The end runs on the pool: the cancel callback must not drop the last
  // reference to the session that holds its subscription.
  std::weak_ptr<McpSession> weak = s;
  auto end = ex->cancel_signal().on_cancel([this, weak] {
    if (auto live = weak.lock()) post_([this, live] { end_listen(live); });
  });
  std::lock_guard lk(mu_);
  if (auto it = listens_.find(s); it != listens_.end()) it->second.end = std::move(end);
}

void Subscriptions::end_listen(const std::shared_ptr<McpSession>& s) {
  Listen l;
  {
    std::lock_guard lk(mu_);
    auto it = listens_.find(s);
    if (it == listens_.end()) return;
    l = std::move(it->second);
    listens_.erase(it);
  }
  // The subscription points into the exchange: it goes first.
  l.end.reset();
  auto snap = catalog_.snapshot();
  for (const auto& uri : l.filter.uris)
    if (auto route = snap->route_resource(uri)) count(*route, -1);
  l.exchange->reply("{\"jsonrpc\":\"2.0\",\"id\":" + l.id + ",\"result\":{\"resultType\":\"complete\",\"_meta\":{\"" +
                    std::string(mcp::kMetaSubscriptionId) + "\":" + l.id + "}}}");
}

void Subscriptions::notify_listens(std::string_view method, const std::string& uri,
                                   const std::function<bool(const ListenFilter&)>& wants) {
  std::vector<std::pair<std::shared_ptr<transport::Exchange>, std::string>> targets;
  {
    std::lock_guard lk(mu_);
    for (const auto& [s, l] : listens_)
      if (wants(l.filter)) targets.emplace_back(l.exchange, l.id);
  }
  for (const auto& [ex, id] : targets) {
    std::string params = "{";
    if (!uri.empty()) params += "\"uri\":" + json::quote(uri) + ",";
    params += "\"_meta\":{\"" + std::string(mcp::kMetaSubscriptionId) + "\":" + id + "}}";
    ex->send("{\"jsonrpc\":\"2.0\",\"method\":\"" + std::string(method) + "\",\"params\":" + params + "}");
  }
}

void Subscriptions::list_changed(std::string_view what) {
  notify_listens("notifications/" + std::string(what) + "/list_changed", "", [&](const ListenFilter& f) {
    return what == "tools" ? f.tools : what == "prompts" ? f.prompts : f.resources;
  });
}

void Subscriptions::resource_updated(const std::string& exposed, const std::string& note) {
  std::vector<std::shared_ptr<McpSession>> subscribed;
  {
    std::lock_guard lk(mu_);
    for (const auto& [s, uris] : resources_)
      if (uris.count(exposed)) subscribed.push_back(s);
  }
  for (auto& s : subscribed) s->notify(note);
  notify_listens("notifications/resources/updated", exposed,
                 [&](const ListenFilter& f) { return f.uris.count(exposed) > 0; });
}

void listen(Services& sv, Request& r) {
  const json::Value* filter = r.params() ? json::find(*r.params(), "notifications") : nullptr;
  if (!filter || !filter->IsObject())
    return r.exchange->reply(Answer::invalid_params("notifications must be a SubscriptionFilter object").write(r.id()));
  auto flag = [&](const char* key) {
    const json::Value* v = json::find(*filter, key);
    return v && v->IsTrue();
  };
  ListenFilter f;
  f.tools = flag("toolsListChanged");
  f.prompts = flag("promptsListChanged");
  f.resources = flag("resourcesListChanged");
  if (const json::Value* uris = json::find(*filter, "resourceSubscriptions"); uris && uris->IsArray()) {
    auto snap = sv.catalog.snapshot();
    for (const auto& u : uris->GetArray()) {
      if (!u.IsString()) continue;
      auto route = snap->route_resource(u.GetString());
      if (!route) continue;
      if (f.uris.insert(snap->expose_uri(*route->origin, route->upstream_key)).second)
        f.as_asked.emplace_back(u.GetString(), u.GetStringLength());
    }
  }
  sv.subscriptions.listen(r.session, r.id(), std::move(f), r.exchange);
}

}  // namespace mcpgw::server
