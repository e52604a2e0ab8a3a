#pragma once
// Base64 (RFC 4648): the standard alphabet with padding for MCP header
// values, the URL-safe one without padding for tokens.
#include <optional>
#include <string>
#include <string_view>

namespace mcpgw {

/// Standard base64 with '=' padding.
std::string base64(std::string_view bytes);
/// Decodes canonical standard base64 (padding required, zero leftover
/// bits); nullopt for anything else.
std::optional<std::string> unbase64(std::string_view text);
/// URL-safe base64 without padding (RFC 4648 §5).
std::string base64url(std::string_view bytes);
/// Decodes canonical URL-safe base64 without padding; nullopt otherwise.
std::optional<std::string> unbase64url(std::string_view text);

}  // namespace mcpgw
