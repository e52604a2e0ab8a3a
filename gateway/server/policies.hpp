#pragma once
// The policies on the server's side: who a session's calls are for the
// rules (catalog/policy.hpp), the call filter that refuses a call before
// its origin runs (every call of a tool passes it: a client's call, a chain
// hop, a task's, call_tool's), the gate of a composite's own upstream calls,
// and which tools a listing or a search shows.
#include <memory>
#include <vector>

#include "catalog/policy.hpp"
#include "server/call_filter.hpp"

namespace mcpgw::server {

/// Who session `s` is to the policies of `cfg`; null when `cfg` has none
/// (nothing is decided, nothing is prepared).
std::shared_ptr<const catalog::Subject> policy_subject(const McpSession& s, const config::Config& cfg);

/// The call filter of the policies: a call the first matching rule refuses
/// is answered with `mcpgw: refused by policy <name>: <message>` (isError),
/// audited with the rule's name and counted as refused (reason policy); it
/// never reaches its origin. It also gates the composite's own upstream
/// calls the same way, as the calling principal.
CallFilter& policy_filter();

/// Which tools of `snap` (by index) `who` may see under `cfg`'s policies in
/// mode `mode`: those some arguments could let through. Empty when `cfg`
/// has no policies (every tool).
std::vector<bool> permitted_tools(const catalog::Snapshot& snap, std::size_t mode, const catalog::Subject* who,
                                  const config::Config& cfg);

}  // namespace mcpgw::server
