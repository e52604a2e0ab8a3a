// Handlers of resources/*: lists, reads (routed to the upstream that
// serves the URI) and a session's subscriptions.
#include "mcp/resource_refs.hpp"
#include "server/apps.hpp"
#include "server/calls.hpp"
#include "server/redaction.hpp"

namespace mcpgw::server {
namespace {

/// A page of `entries`' definitions.
Answer entries_page(Services& sv, Request& r, std::string_view key,
                    const std::vector<catalog::ExposedEntry> catalog::Snapshot::*entries) {
  auto snap = sv.catalog.snapshot();
  const auto& list = (*snap).*entries;
  return page_of(
      r, key, list.size(), [&](std::size_t i) -> std::string_view { return list[i].definition; },
      static_cast<std::size_t>(sv.settings.config()->listen.page_size), snap);
}

/// The route of `params.uri` and its exposed form, or the error to answer.
Task<std::variant<std::pair<catalog::Route, std::string>, Answer>> subscription_target(Services& sv, Request& r) {
  auto uri = r.params() ? json::get_string(*r.params(), "uri") : std::nullopt;
  if (!uri) co_return Answer::invalid_params("uri must be a string");
  auto snap = sv.catalog.snapshot();
  auto route = snap->route_resource(*uri);
  if (!route && sv.catalog.starting()) {
    snap = co_await after_startup(sv, r);
    route = snap->route_resource(*uri);
  }
  if (!route) co_return Answer::error(mcp::resource_not_found_code(r.context), "Resource not found: " + std::string(*uri));
  // Whatever form the client used, updates arrive under the exposed URI.
  std::string exposed = snap->expose_uri(*route->origin, route->upstream_key);
  co_return std::make_pair(std::move(*route), std::move(exposed));
}

/// The session's subscriptions are the cluster's (cluster.redis): the
/// replica holding its GET stream subscribes upstream.
bool shared(Services& sv, Request& r) { return sv.cluster && sv.cluster->redis() && !r.session->stateless(); }

/// Records the (un)subscription cluster-wide; the error when Redis cannot.
Task<std::optional<Answer>> share_subscription(Services& sv, Request& r, std::string exposed, bool on) {
  if (!shared(sv, r)) co_return std::nullopt;
  auto done = co_await sv.cluster->set_subscription(r.session->id(), std::move(exposed), on);
  if (!done)
    co_return Answer::error(jsonrpc::kInternalError, std::string("mcpgw: cannot ") +
                                                         (on ? "subscribe" : "unsubscribe") +
                                                         " across the cluster: " + done.error());
  co_return std::nullopt;
}

/// resources/subscribe (`on`) or resources/unsubscribe: in place upstream
/// (where this replica holds the session's stream) when it resumes.
Task<Answer> set_subscription(Services& sv, Request& r, bool on) {
  auto target = co_await subscription_target(sv, r);
  if (auto* refused = std::get_if<Answer>(&target)) co_return std::move(*refused);
  auto& [route, exposed] = std::get<std::pair<catalog::Route, std::string>>(target);
  if (auto refused = co_await share_subscription(sv, r, exposed, on)) co_return std::move(*refused);
  if (shared(sv, r) && !r.session->stream_here()) co_return Answer::empty();
  if (on) co_await sv.subscriptions.subscribe(r.session, std::move(route), std::move(exposed));
  else co_await sv.subscriptions.unsubscribe(r.session, std::move(route), std::move(exposed));
  co_return Answer::empty();
}

}  // namespace

Answer list_resources(Services& sv, Request& r) { return entries_page(sv, r, "resources", &catalog::Snapshot::resources); }

Answer list_resource_templates(Services& sv, Request& r) {
  return entries_page(sv, r, "resourceTemplates", &catalog::Snapshot::templates);
}

Task<Answer> read_resource(Services& sv, Request& r) {
  auto uri = r.params() ? json::get_string(*r.params(), "uri") : std::nullopt;
  if (!uri) co_return Answer::invalid_params("uri must be a string");
  auto snap = sv.catalog.snapshot();
  if (!view_server(*snap, r.params()) && !snap->route_resource(*uri) && sv.catalog.starting())
    snap = co_await after_startup(sv, r);
  std::optional<catalog::Route> route;
  if (auto view = view_server(*snap, r.params())) {
    auto routed = route_view_resource(*snap, *uri, *view);
    if (auto* refused = std::get_if<Answer>(&routed)) co_return std::move(*refused);
    route = std::move(std::get<catalog::Route>(routed));
  } else {
    route = snap->route_resource(*uri);
  }
  if (!route) {
    json::Document data(rapidjson::kObjectType);
    data.AddMember("uri", json::str(*uri, data.GetAllocator()), data.GetAllocator());
    co_return Answer::error(mcp::resource_not_found_code(r.context), snap->unroutable_reason(*uri), &data);
  }
  auto p = std::make_shared<json::Document>(json::clone(*r.params()));
  json::set(*p, "uri", json::str(route->upstream_key, p->GetAllocator()), p->GetAllocator());
  strip_client_state(*p);
  if (json::Value* meta = json::find(*p, "_meta"); meta && meta->IsObject()) meta->RemoveMember(kViewServerKey.data());
  auto cfg = sv.settings.config();
  const bool tag_views = cfg->apps.tag_views;
  Work work = [route = *route, p, tag_views, caller = caller_of(*r.session), cfg, &sv](
                  std::shared_ptr<ClientCall> client, CancelSignal& cancel, Progress*) -> Task<upstream::Reply> {
    upstream::Reply reply =
        co_await route.origin->request("resources/read", *p, options_for(*route.origin, cancel, caller, client));
    if (cfg->redact.enabled)
      redact_answer(cfg->redact, Relayed::Resource, "resources/read " + route.upstream_key, caller, reply, sv.metrics,
                    sv.audit);
    // Contents name the resource as the client knows it; a view names its
    // server on the requests it sends.
    if (!reply.rpc_error && route.origin->config().prefix) {
      const std::string& server = route.origin->name();
      mcp::expose_contents(server, reply.body, reply.body.GetAllocator());
      if (tag_views) tag_view_contents(server, reply.body, reply.body.GetAllocator());
    }
    co_return reply;
  };
  co_return co_await execute(sv, r, "resources/read " + std::string(*uri), nullptr, std::move(work));
}

Task<Answer> subscribe(Services& sv, Request& r) { return set_subscription(sv, r, true); }

Task<Answer> unsubscribe(Services& sv, Request& r) { return set_subscription(sv, r, false); }

}  // namespace mcpgw::server
