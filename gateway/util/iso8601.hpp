#pragma once
// Timestamps as MCP (tasks' createdAt) and the audit log write them.
#include <cstdint>
#include <string>

namespace mcpgw {

/// `unix_ms` as an ISO 8601 UTC timestamp with milliseconds
/// ("2026-11-25T03:16:51.123Z").
std::string iso8601(std::int64_t unix_ms);

}  // namespace mcpgw
