// Handlers of prompts/* and completion/complete, routed to the upstream
// that serves the prompt or resource.
#include "mcp/resource_refs.hpp"
#include "server/calls.hpp"
#include "server/redaction.hpp"

namespace mcpgw::server {

Answer list_prompts(Services& sv, Request& r) {
  auto snap = sv.catalog.snapshot();
  return page_of(
      r, "prompts", snap->prompts.size(), [&](std::size_t i) -> std::string_view { return snap->prompts[i].definition; },
      static_cast<std::size_t>(sv.settings.config()->listen.page_size), snap);
}

Task<Answer> get_prompt(Services& sv, Request& r) {
  auto name = r.params() ? json::get_string(*r.params(), "name") : std::nullopt;
  if (!name) co_return Answer::invalid_params("name must be a string");
  auto route = sv.catalog.snapshot()->route_prompt(*name);
  if (!route && sv.catalog.starting()) {
    auto later = co_await after_startup(sv, r);
    route = later->route_prompt(*name);
  }
  if (!route) co_return Answer::invalid_params("unknown prompt: " + std::string(*name));
  auto p = std::make_shared<json::Document>(json::clone(*r.params()));
  json::set(*p, "name", json::str(route->upstream_key, p->GetAllocator()), p->GetAllocator());
  strip_client_state(*p);
  const json::Value* args = json::find(*r.params(), "arguments");
  Work work = [route = *route, p, caller = caller_of(*r.session), cfg = sv.settings.config(), &sv](
                  std::shared_ptr<ClientCall> client, CancelSignal& cancel, Progress*) -> Task<upstream::Reply> {
    upstream::Reply reply =
        co_await route.origin->request("prompts/get", *p, options_for(*route.origin, cancel, caller, client));
    if (cfg->redact.enabled)
      redact_answer(cfg->redact, Relayed::Prompt, "prompts/get " + route.upstream_key, caller, reply, sv.metrics,
                    sv.audit);
    if (!reply.rpc_error && route.origin->config().prefix)
      mcp::expose_messages(route.origin->name(), reply.body, reply.body.GetAllocator());
    co_return reply;
  };
  co_return co_await execute(sv, r, "prompts/get " + std::string(*name), args, std::move(work));
}

Task<Answer> complete(Services& sv, Request& r) {
  const json::Value* ref = r.params() ? json::find(*r.params(), "ref") : nullptr;
  auto type = ref ? json::get_string(*ref, "type") : std::nullopt;
  if (!type) co_return Answer::invalid_params("ref.type must be a string");
  if (*type != "ref/prompt" && *type != "ref/resource")
    co_return Answer::invalid_params("unknown ref.type " + std::string(*type));
  const char* key = *type == "ref/prompt" ? "name" : "uri";
  auto route_in = [&](const catalog::Snapshot& snap) -> std::optional<catalog::Route> {
    auto target = json::get_string(*ref, key);
    if (!target) return std::nullopt;
    if (*type == "ref/prompt") return snap.route_prompt(*target);
    auto route = snap.route_template(*target);
    return route ? route : snap.route_resource(*target);
  };
  auto route = route_in(*sv.catalog.snapshot());
  if (!route && sv.catalog.starting()) {
    auto later = co_await after_startup(sv, r);
    route = route_in(*later);
  }
  if (!route) co_return Answer::invalid_params("unknown " + std::string(*type == "ref/prompt" ? "prompt" : "resource"));
  json::Document p = json::clone(*r.params());
  json::set(p["ref"], key, json::str(route->upstream_key, p.GetAllocator()), p.GetAllocator());
  upstream::Caller caller = caller_of(*r.session);
  upstream::Reply reply = co_await route->origin->request(
      "completion/complete", p, options_for(*route->origin, r.exchange->cancel_signal(), caller, nullptr));
  if (auto cfg = sv.settings.config(); cfg->redact.enabled)
    redact_answer(cfg->redact, Relayed::Completion, "completion/complete " + route->upstream_key, caller, reply,
                  sv.metrics, sv.audit);
  co_return Answer::relay(std::move(reply));
}

}  // namespace mcpgw::server
