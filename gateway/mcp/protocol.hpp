#pragma once
// MCP revisions, version negotiation and small result builders shared by the
// gateway and the example servers.
#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "jsonrpc/json.hpp"

namespace mcpgw::mcp {

/// Stateful-era revisions this build speaks, newest first.
inline constexpr std::array<std::string_view, 4> kSessionVersions = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
inline constexpr std::string_view kLatestVersion = kSessionVersions[0];
/// The version a Streamable HTTP server assumes when the client sends no
/// MCP-Protocol-Version header (spec 2025-06-18, "Protocol Version Header").
inline constexpr std::string_view kDefaultHttpVersion = "2025-03-26";

/// True when `v` is one of kSessionVersions.
bool is_supported(std::string_view v);

/// The version to answer an initialize request for `requested` with: the same
/// one when supported, else the latest (the client then decides).
std::string_view negotiate(std::string_view requested);

/// A CallToolResult with one text content item.
json::Document text_result(std::string_view text);
/// A CallToolResult with one text item and isError set.
json::Document tool_error(std::string_view text);

/// Cursor for offset-based pagination over a list the gateway serves.
std::string encode_cursor(std::size_t offset);
/// The offset in a cursor made by encode_cursor, or nullopt when invalid.
std::optional<std::size_t> decode_cursor(std::string_view cursor);

}  // namespace mcpgw::mcp
