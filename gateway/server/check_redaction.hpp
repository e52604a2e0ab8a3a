#pragma once
// The redaction part of `mcpgw check`: whether redact: is on, what it does
// and where, and every detector: the built-in ones (those in use marked)
// and the operator's patterns.
#include <ostream>

#include "config/config.hpp"
#include "jsonrpc/json.hpp"

namespace mcpgw::server {

/// {enabled, action, in: [...], detectors: [{name, kind: builtin|pattern,
/// description|regex, active}]}.
json::Value redaction_json(const config::Redact& r, json::Allocator& a);

/// The same as text.
void print_redaction(const config::Redact& r, std::ostream& out);

}  // namespace mcpgw::server
