#pragma once
// The filters that map a call of an overridden tool (servers[].tools) back
// to its upstream's arguments, one in each chain of call_filter.hpp:
// - admission: a client may not give a fixed argument (-32602 naming it,
//   before anything runs or a task is made); a call by the upstream's own
//   tool name (an MCP Apps view, a bare name) speaks the upstream's
//   argument names, which are put in the exposed ones here;
// - call: each call of the origin (the tool, each chain hop, a task's run)
//   gets the upstream's names, the fixed values and the omitted defaults.
#include "server/call_filter.hpp"

namespace mcpgw::server {

/// The admission filter: after the tool is resolved, before anything else.
AdmitFilter& override_admit_filter();

/// The call filter: last before the origin's call.
CallFilter& override_call_filter();

}  // namespace mcpgw::server
