#include "server/subscriptions.hpp"

#include <spdlog/spdlog.h>

#include <vector>

#include "mcp/era.hpp"
#include "server/methods.hpp"

namespace mcpgw::server {
namespace {

/// notifications/subscriptions/acknowledged of a listen of `filter`, whose
/// request is `id`.
std::string acknowledgement(const ListenFilter& filter, const jsonrpc::Id& id) {
  // The acknowledgement names what will be sent: what was asked for that
  // the gateway can tell.
  json::Document ack(rapidjson::kObjectType);
  auto& a = ack.GetAllocator();
  json::Value honoured(rapidjson::kObjectType);
  if (filter.tools) honoured.AddMember("toolsListChanged", true, a);
  if (filter.prompts) honoured.AddMember("promptsListChanged", true, a);
  if (filter.resources) honoured.AddMember("resourcesListChanged", true, a);
  if (!filter.uris.empty()) {
    json::Value kept(rapidjson::kArrayType);
    for (const auto& u : filter.as_asked) kept.PushBack(json::str(u, a), a);
    honoured.AddMember("resourceSubscriptions", kept, a);
  }
  ack.AddMember("notifications", honoured, a);
  // The id goes in as text: a number keeps the digits the client wrote.
  std::string params = json::write(ack);
  params.pop_back();
  params += ",\"_meta\":{\"" + std::string(mcp::kMetaSubscriptionId) + "\":" + std::string(id.json()) + "}}";
  return R"({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":)" + params + "}";
}

}  // namespace

Subscriptions::Subscriptions(catalog::Catalog& catalog) : catalog_(catalog) {}

Task<> Subscriptions::subscribe(std::shared_ptr<McpSession> s, catalog::Route route, std::string exposed) {
  bool added;
  {
    util::MutexLock lk(mu_);
    added = resources_[s].insert(exposed).second;
  }
  // Subscribed already, it still waits for an upstream subscription under
  // way: the answer says it is in place.
  co_await count(std::move(route), added ? 1 : 0);
}

Task<> Subscriptions::unsubscribe(std::shared_ptr<McpSession> s, catalog::Route route, std::string exposed) {
  bool removed = false;
  {
    util::MutexLock lk(mu_);
    if (auto it = resources_.find(s); it != resources_.end()) {
      removed = it->second.erase(exposed) > 0;
      if (it->second.empty()) resources_.erase(it);
    }
  }
  if (removed) co_await count(std::move(route), -1);
}

Task<> Subscriptions::drop(std::shared_ptr<McpSession> s) {
  std::set<std::string> uris;
  {
    util::MutexLock lk(mu_);
    if (auto it = resources_.find(s); it != resources_.end()) {
      uris.swap(it->second);
      resources_.erase(it);
    }
  }
  auto snap = catalog_.snapshot();
  for (const auto& uri : uris)
    if (auto route = snap->route_resource(uri)) co_await count(std::move(*route), -1);
}

Task<> Subscriptions::replace(std::shared_ptr<McpSession> s, std::vector<std::string> uris) {
  std::set<std::string> wanted(uris.begin(), uris.end());
  std::set<std::string> now;
  {
    util::MutexLock lk(mu_);
    if (auto it = resources_.find(s); it != resources_.end()) now = it->second;
  }
  auto snap = catalog_.snapshot();
  for (const auto& uri : now)
    if (!wanted.count(uri))
      if (auto route = snap->route_resource(uri)) co_await unsubscribe(s, std::move(*route), uri);
  for (const auto& uri : wanted)
    if (!now.count(uri))
      if (auto route = snap->route_resource(uri)) co_await subscribe(s, std::move(*route), uri);
}

Task<> Subscriptions::moved(const upstream::Upstream& was, std::shared_ptr<upstream::Upstream> now) {
  std::vector<std::string> uris;
  {
    util::MutexLock lk(mu_);
    for (const auto& [key, e] : upstream_)
      if (key.first == was.name() && e.subscribers > 0) uris.push_back(key.second);
  }
  if (!uris.empty())
    spdlog::info("upstream {}: {} resource subscriptions moved to its new connection", now->name(), uris.size());
  for (auto& uri : uris) {
    // A named route, not a temporary in the co_await: GCC 12 destroys such
    // a temporary twice.
    catalog::Route route{now, std::move(uri)};
    co_await count(std::move(route), 0);
  }
}

Task<> Subscriptions::count(catalog::Route r, int delta) {
  const RemoteKey key{r.origin->name(), r.upstream_key};
  if (delta != 0) {
    util::MutexLock lk(mu_);
    upstream_[key].subscribers += delta;
  }
  // One upstream subscription serves every client subscribed to the
  // resource. One coroutine at a time sends for it, again as long as what
  // is wanted changed meanwhile; the others wait until it is done, so none
  // is answered before the subscription is in place and a subscribe and an
  // unsubscribe never overtake each other.
  for (;;) {
    const auto seen = sent_.generation();
    bool on = false, mine = false;
    {
      util::MutexLock lk(mu_);
      auto it = upstream_.find(key);
      if (it == upstream_.end()) co_return;
      Remote& e = it->second;
      on = e.subscribers > 0;
      // A subscription held on a server a reload replaced is made again.
      if (!e.sending && e.subscribed == on && (!on || e.where == r.origin.get())) {
        if (!on) upstream_.erase(it);
        co_return;
      }
      mine = !e.sending;
      e.sending = true;
    }
    if (!mine) {
      co_await sent_.wait(seen, Event::Clock::time_point::max());
      continue;
    }
    json::Document p(rapidjson::kObjectType);
    p.AddMember("uri", json::str(r.upstream_key, p.GetAllocator()), p.GetAllocator());
    upstream::CallOptions o;
    o.deadline = r.origin->deadline();
    const char* method = on ? "resources/subscribe" : "resources/unsubscribe";
    try {
      auto reply = co_await r.origin->request(method, p, o);
      if (reply.rpc_error)
        spdlog::warn("upstream {}: {} {} failed: {}", r.origin->name(), method, r.upstream_key,
                     json::write(reply.body));
    } catch (const std::exception& e) {
      // Taken as sent all the same: the waiting subscribers must go on.
      spdlog::warn("upstream {}: {} {} failed: {}", r.origin->name(), method, r.upstream_key, e.what());
    }
    {
      util::MutexLock lk(mu_);
      Remote& e = upstream_[key];
      e.sending = false;
      e.subscribed = on;
      e.where = r.origin.get();
    }
    sent_.notify();
  }
}

Task<> Subscriptions::listen(std::shared_ptr<McpSession> s, jsonrpc::Id id, ListenFilter filter,
                             std::shared_ptr<transport::Exchange> ex) {
  // The routes as the listen starts are those it counted: the same ones
  // are counted out at its end, whatever a reload changed meanwhile.
  std::vector<catalog::Route> routes;
  auto snap = catalog_.snapshot();
  for (const auto& uri : filter.uris)
    if (auto route = snap->route_resource(uri)) routes.push_back(std::move(*route));
  for (const auto& route : routes) co_await count(route, 1);
  ex->send(acknowledgement(filter, id));
  {
    util::MutexLock lk(mu_);
    listens_[s] = Listen{std::string(id.json()), std::move(filter), ex};
  }
  // Until the client closes the stream or cancels the request: a wait on
  // the exchange's cancel signal, with no thread held.
  Event never;
  while (!ex->cancelled())
    co_await never.wait(never.generation(), Event::Clock::time_point::max(), &ex->cancel_signal());
  {
    util::MutexLock lk(mu_);
    if (auto it = listens_.find(s); it != listens_.end() && it->second.exchange == ex) listens_.erase(it);
  }
  for (const auto& route : routes) co_await count(route, -1);
}

void Subscriptions::notify_listens(std::string_view method, const std::string& uri,
                                   const std::function<bool(const ListenFilter&)>& wants) {
  std::vector<std::pair<std::shared_ptr<transport::Exchange>, std::string>> targets;
  {
    util::MutexLock lk(mu_);
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
    util::MutexLock lk(mu_);
    for (const auto& [s, uris] : resources_)
      if (uris.count(exposed)) subscribed.push_back(s);
  }
  for (auto& s : subscribed) s->notify(note);
  notify_listens("notifications/resources/updated", exposed,
                 [&](const ListenFilter& f) { return f.uris.count(exposed) > 0; });
}

Task<Answer> listen(Services& sv, Request& r) {
  const json::Value* filter = r.params() ? json::find(*r.params(), "notifications") : nullptr;
  if (!filter || !filter->IsObject())
    co_return Answer::invalid_params("notifications must be a SubscriptionFilter object");
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
  co_await sv.subscriptions.listen(r.session, r.id(), std::move(f), r.exchange);
  json::Document result(rapidjson::kObjectType);
  result.AddMember("resultType", "complete", result.GetAllocator());
  // The id goes in as text: a number keeps the digits the client wrote.
  std::string meta = "{\"" + std::string(mcp::kMetaSubscriptionId) + "\":" + std::string(r.id().json()) + "}";
  co_return Answer::result_with(std::move(result), "_meta", std::move(meta));
}

}  // namespace mcpgw::server
