#include "chain/chain.hpp"

#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "chain/merge.hpp"
#include "mcp/protocol.hpp"

namespace mcpgw::chain {
namespace {

using Clock = std::chrono::steady_clock;

const json::Value* next_tool(const json::Value& result) {
  const json::Value* meta = json::find(result, "_meta");
  const json::Value* next = meta ? json::find(*meta, "nextTool") : nullptr;
  return next && next->IsObject() ? next : nullptr;
}

void canonical_into(const json::Value& v, std::string& out) {
  if (v.IsObject()) {
    std::vector<const json::Value::Member*> members;
    for (const auto& m : v.GetObject()) members.push_back(&m);
    std::sort(members.begin(), members.end(), [](auto* a, auto* b) {
      return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
             std::string_view(b->name.GetString(), b->name.GetStringLength());
    });
    out += '{';
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i) out += ',';
      out += json::write(members[i]->name);
      out += ':';
      canonical_into(members[i]->value, out);
    }
    out += '}';
  } else if (v.IsArray()) {
    out += '[';
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      if (i) out += ',';
      canonical_into(v[i], out);
    }
    out += ']';
  } else {
    out += json::write(v);
  }
}

bool is_error_result(const json::Value& r) {
  const json::Value* e = json::find(r, "isError");
  return e && e->IsTrue();
}

/// A JSON-RPC error from a hop becomes an isError result, so the chain's
/// answer stays one result.
json::Document as_result(upstream::Reply reply) {
  if (!reply.rpc_error) return std::move(reply.body);
  return mcp::tool_error(jsonrpc::describe_error(reply.body));
}

/// Finds the hop's target: a tool of the server that produced the result,
/// by the name that server knows (`own_name`: its arguments are in that
/// server's names too), then any exposed name. `hidden` tells a tool that
/// exists but that this client may not call.
const catalog::ExposedTool* find_target(const Context& ctx, const catalog::ExposedTool& from, std::string_view name,
                                        bool& hidden, bool& own_name) {
  hidden = false;
  const catalog::ExposedTool* found = nullptr;
  for (const auto& t : ctx.snapshot.tools)
    if (t.origin == from.origin && t.upstream_name == name) found = &t;
  own_name = found != nullptr;
  // The server's own tool, kept out by the filters, is hidden; it must not
  // fall through to another server's tool of the same exposed name.
  if (!found && from.origin && from.origin->has_tool(name)) {
    hidden = true;
    return nullptr;
  }
  if (!found) {
    auto it = ctx.snapshot.tool_index.find(std::string(name));
    if (it == ctx.snapshot.tool_index.end()) return nullptr;
    found = &ctx.snapshot.tools[it->second];
  }
  if (ctx.mode >= found->in_mode.size() || !found->in_mode[ctx.mode]) {
    hidden = true;
    return nullptr;
  }
  return found;
}

/// The hop's target withheld by integrity.pins (block), by either name.
const integrity::ToolReport* withheld_target(const Context& ctx, const catalog::ExposedTool& from, std::string_view name) {
  const auto& view = ctx.snapshot.integrity;
  if (const integrity::ToolReport* w = view.withheld_tool(name)) return w;
  return from.composite ? nullptr : view.withheld_tool(from.origin->name(), name);
}

}  // namespace

bool has_next_tool(const json::Value& result) { return next_tool(result) != nullptr; }

std::string canonical(const json::Value& v) {
  std::string out;
  canonical_into(v, out);
  return out;
}

std::string validate_arguments(const catalog::ExposedTool& tool, const json::Value& arguments) {
  auto def = json::parse(tool.definition);
  const json::Value* schema = def ? json::find(*def, "inputSchema") : nullptr;
  if (!schema || !schema->IsObject()) return {};
  json::SchemaDocument sd(*schema);
  json::SchemaValidator validator(sd);
  if (arguments.Accept(validator)) return {};
  rapidjson::StringBuffer where, rule;
  validator.GetInvalidDocumentPointer().StringifyUriFragment(where);
  validator.GetInvalidSchemaPointer().StringifyUriFragment(rule);
  return std::string("the value at ") + where.GetString() + " fails \"" + validator.GetInvalidSchemaKeyword() +
         "\" of the schema at " + rule.GetString();
}

namespace {

/// The client's own call of `first`, as the chain's first call.
Call first_call(const catalog::ExposedTool& first, const json::Value* arguments, json::Document result, double ms) {
  Call c;
  c.tool = first.name;
  if (arguments) c.arguments = json::clone(*arguments);
  c.is_error = is_error_result(result);
  c.result = std::move(result);
  c.ms = ms;
  return c;
}

}  // namespace

Task<json::Document> resolve(const Context& ctx, const catalog::ExposedTool& first, const json::Value* arguments,
                             json::Document first_result, double first_ms) {
  std::vector<Call> calls;
  calls.push_back(first_call(first, arguments, std::move(first_result), first_ms));
  std::set<std::string> seen{calls.back().tool + "\n" + canonical(calls.back().arguments)};
  const catalog::ExposedTool* current = &first;
  std::string refusal;  // why the chain stopped early, if it did
  Call refused;         // the hop that was refused, for the trace

  for (int hop = 1;; ++hop) {
    const json::Value* next = next_tool(calls.back().result);
    if (!next) break;
    auto name = json::get_string(*next, "tool");
    if (!name) name = json::get_string(*next, "name");
    refused.tool = name ? std::string(*name) : std::string("(no tool named)");
    if (const json::Value* a = json::find(*next, "arguments"); a && !a->IsNull())
      refused.arguments = json::clone(*a);
    std::string target = refused.tool;

    if (ctx.cancel && ctx.cancel->cancelled()) {
      refusal = "the client cancelled the call";
    } else if (!name) {
      refusal = "nextTool names no tool";
    } else if (hop > ctx.config.max_depth) {
      refusal = "depth: the chain would exceed chain.max_depth (" + std::to_string(ctx.config.max_depth) + " hops)";
    } else if (!refused.arguments.IsObject()) {
      refusal = "invalid arguments: nextTool.arguments must be an object";
    } else {
      bool hidden = false, own_name = false;
      const catalog::ExposedTool* tool = find_target(ctx, *current, *name, hidden, own_name);
      if (!tool) {
        const integrity::ToolReport* withheld = withheld_target(ctx, *current, *name);
        refusal = withheld ? "withheld: " + withheld->refusal()
                           : hidden ? "hidden: the tool is not available to this client" : "unknown tool";
      } else {
        refused.tool = tool->name;
        // The server's own names go the way of the exposed ones, which the
        // call maps back (servers[].tools).
        if (own_name && tool->argument_map)
          refused.arguments = catalog::from_upstream(*tool->argument_map, &refused.arguments);
        std::string key = tool->name + "\n" + canonical(refused.arguments);
        if (!seen.insert(key).second) {
          refusal = "cycle: " + tool->name + " was already called with these arguments";
        } else if (std::string why = validate_arguments(*tool, refused.arguments); !why.empty()) {
          refusal = "invalid arguments: " + why;
        } else {
          if (ctx.before_hop) ctx.before_hop(hop, *tool);
          auto started = Clock::now();
          upstream::Reply reply = co_await ctx.call(*tool, &refused.arguments);
          json::Document result = as_result(std::move(reply));
          Call c;
          c.tool = tool->name;
          c.arguments.Swap(refused.arguments);
          c.is_error = is_error_result(result);
          c.result = std::move(result);
          c.ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
          if (ctx.after_hop) ctx.after_hop(hop, *tool, c.is_error, c.ms);
          calls.push_back(std::move(c));
          refused = Call{};
          current = tool;
          continue;
        }
      }
    }
    refusal = "mcpgw: chain stopped at hop " + std::to_string(hop) + " (" + target + "): " + refusal;
    break;
  }

  const Refusal stopped{std::move(refusal), std::move(refused)};
  // The result is the called tool's: its outputSchema decides the
  // structuredContent (merge.hpp).
  auto def = json::parse(first.definition);
  const json::Value* schema = def ? json::find(*def, "outputSchema") : nullptr;
  co_return merge(calls, stopped.text.empty() ? nullptr : &stopped, schema && schema->IsObject() ? schema : nullptr,
                  ctx.config.merge);
}

}  // namespace mcpgw::chain
