// Handlers of the Skills extension (SEP-2640): skills/list merges the
// upstreams' skill entries (listed at connect time, each entry whole on one
// page), skills/get and resources/directory/read go to the server the URI
// names. URIs are exposed like every resource URI (skill:// keeps its
// scheme); frontmatter, digests and sizes pass unchanged.
#include "mcp/resource_refs.hpp"
#include "server/calls.hpp"

namespace mcpgw::server {
namespace {

/// Routes `params.uri` with `route`, sends `method` to its server and
/// rewrites the answer's URIs with `expose`.
Task<Answer> routed(Services& sv, Request& r, std::string_view method,
                    void (*expose)(std::string_view server, json::Value& result, json::Allocator& a)) {
  auto uri = r.params() ? json::get_string(*r.params(), "uri") : std::nullopt;
  if (!uri) co_return Answer::invalid_params("uri must be a string");
  auto route = sv.catalog.snapshot()->route_skill(*uri);
  if (!route && sv.catalog.starting()) {
    auto later = co_await after_startup(sv, r);
    route = later->route_skill(*uri);
  }
  if (!route) co_return Answer::invalid_params("no server serves the skill " + std::string(*uri));
  if (method == "resources/directory/read" && !route->origin->listing()->can_read_directories)
    co_return Answer::invalid_params("server " + route->origin->name() +
                                     " does not offer resources/directory/read (" + std::string(*uri) + ")");
  auto p = std::make_shared<json::Document>(json::clone(*r.params()));
  json::set(*p, "uri", json::str(route->upstream_key, p->GetAllocator()), p->GetAllocator());
  strip_client_state(*p);
  Work work = [route = *route, p, method = std::string(method), expose, caller = caller_of(*r.session)](
                  std::shared_ptr<ClientCall> client, CancelSignal& cancel, Progress*) -> Task<upstream::Reply> {
    upstream::Reply reply =
        co_await route.origin->request(method, *p, options_for(*route.origin, cancel, caller, client));
    if (!reply.rpc_error && route.origin->config().prefix)
      expose(route.origin->name(), reply.body, reply.body.GetAllocator());
    co_return reply;
  };
  co_return co_await execute(sv, r, std::string(method) + " " + std::string(*uri), nullptr, std::move(work));
}

void expose_skill_result(std::string_view server, json::Value& result, json::Allocator& a) {
  if (json::Value* skill = json::find(result, "skill"); skill && skill->IsObject())
    mcp::expose_skill_entry(server, *skill, a);
}

void expose_directory(std::string_view server, json::Value& result, json::Allocator& a) {
  json::Value* resources = json::find(result, "resources");
  if (!resources || !resources->IsArray()) return;
  for (auto& item : resources->GetArray())
    if (auto u = json::get_string(item, "uri")) json::set(item, "uri", json::str(mcp::expose_uri(server, *u), a), a);
}

}  // namespace

Answer list_skills(Services& sv, Request& r) {
  auto snap = sv.catalog.snapshot();
  return page_of(
      r, "skills", snap->skills.size(), [&](std::size_t i) -> std::string_view { return snap->skills[i].definition; },
      static_cast<std::size_t>(sv.settings.config()->listen.page_size), snap);
}

Task<Answer> get_skill(Services& sv, Request& r) { return routed(sv, r, "skills/get", expose_skill_result); }

Task<Answer> read_directory(Services& sv, Request& r) {
  return routed(sv, r, "resources/directory/read", expose_directory);
}

}  // namespace mcpgw::server
