#include "server/argument_filters.hpp"

#include "catalog/overrides.hpp"

namespace mcpgw::server {
namespace {

std::string fixed_message(const catalog::ExposedTool& tool, const std::string& argument) {
  return "Invalid params: argument \"" + argument + "\" of tool " + tool.name +
         " is fixed by the gateway's configuration (servers[].tools) and cannot be given";
}

Task<Answer> answered(Answer a) { co_return a; }

/// The call goes on with `call.called.args` in the exposed names, held in
/// this frame until the rest of the chain has answered (the work copies
/// them).
Task<Answer> in_exposed_names(CallRequest& call, AdmitNext next) {
  const json::Value* given = call.called.args;
  json::Document exposed = catalog::from_upstream(*call.called.tool->argument_map, given);
  call.called.args = &exposed;
  Answer answer = co_await next(call);
  call.called.args = given;
  co_return answer;
}

class OverrideAdmitFilter final : public AdmitFilter {
 public:
  Task<Answer> on_call(CallRequest& call, AdmitNext next) override {
    const CalledTool& c = call.called;
    if (!c.tool || !c.tool->argument_map) return next(call);
    if (c.by_upstream_name) return in_exposed_names(call, next);
    if (const std::string* fixed = catalog::fixed_argument_in(*c.tool->argument_map, c.args))
      return answered(refuse_call(call.sv, call.r, "invalid_params", c.name, c.args, jsonrpc::kInvalidParams,
                                  fixed_message(*c.tool, *fixed)));
    return next(call);
  }
};

/// The origin's call with the upstream's arguments; `call.arguments` is
/// the caller's again once it answered, for the filters outside this one.
Task<upstream::Reply> mapped_call(ServerCall& call, CallNext next) {
  const catalog::ArgumentMap& map = *call.tool.argument_map;
  // A hop naming the exposed tool may carry one; the client's own call was
  // refused at admission already.
  if (const std::string* fixed = catalog::fixed_argument_in(map, call.arguments))
    co_return upstream::Reply::error(jsonrpc::kInvalidParams, fixed_message(call.tool, *fixed));
  json::Pool pool;  // in this frame: one allocation fewer per call than a document's
  json::Value upstream_args = catalog::to_upstream(map, call.arguments, pool);
  const json::Value* given = call.arguments;
  call.arguments = &upstream_args;
  upstream::Reply reply = co_await next(call);
  call.arguments = given;
  co_return reply;
}

class OverrideCallFilter final : public CallFilter {
 public:
  Task<upstream::Reply> on_call(ServerCall& call, CallNext next) override {
    if (!call.tool.argument_map) return next(call);
    return mapped_call(call, next);
  }
};

}  // namespace

AdmitFilter& override_admit_filter() {
  static OverrideAdmitFilter filter;
  return filter;
}

CallFilter& override_call_filter() {
  static OverrideCallFilter filter;
  return filter;
}

}  // namespace mcpgw::server
