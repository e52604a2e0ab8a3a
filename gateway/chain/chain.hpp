#pragma once
// Server-side resolution of `_meta.nextTool` (seeds 000 and 003): the
// gateway follows a tool result's nextTool itself, hop after hop, and hands
// the client one merged result with the trace in `_meta["mcpgw/chain"]`.
#include <functional>
#include <string>

#include "catalog/catalog.hpp"
#include "config/config.hpp"
#include "upstream/upstream.hpp"
#include "util/cancel.hpp"

namespace mcpgw::chain {

/// Calls one exposed tool as the client would (its deadline, cancellation,
/// progress). `arguments` may be null.
using CallFn = std::function<Task<upstream::Reply>(const catalog::ExposedTool& tool, const json::Value* arguments)>;

/// Told before each hop (1-based), e.g. to report progress and audit it.
using HopFn = std::function<void(int hop, const catalog::ExposedTool& tool)>;
/// Told after each hop with its outcome and duration.
using HopDoneFn = std::function<void(int hop, const catalog::ExposedTool& tool, bool is_error, double ms)>;

struct Context {
  const catalog::Snapshot& snapshot;
  std::size_t mode;            ///< the client's mode index in the snapshot
  const config::Chain& config;
  CallFn call;
  HopFn before_hop;
  HopDoneFn after_hop;
  CancelSignal* cancel = nullptr;
};

/// The `nextTool` of a result, if it has one (`tool` or `name`).
bool has_next_tool(const json::Value& result);

/// Follows the nextTool chain that starts with the client's call of `first`
/// with `arguments`, whose result is `first_result` (taking `ms`). Returns
/// the merged result; never a JSON-RPC error. Nothing waits in a thread
/// between hops.
Task<json::Document> resolve(const Context& ctx, const catalog::ExposedTool& first, const json::Value* arguments,
                             json::Document first_result, double first_ms);

/// Arguments serialised with object keys sorted, so equal arguments compare
/// equal whatever their key order (for cycle detection).
std::string canonical(const json::Value& v);

/// Checks `arguments` against the tool's inputSchema (draft-04 keywords;
/// unknown keywords are ignored). Returns an empty string when valid, else
/// the validator's message.
std::string validate_arguments(const catalog::ExposedTool& tool, const json::Value& arguments);

}  // namespace mcpgw::chain
