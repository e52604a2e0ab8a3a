#include "mcp/protocol.hpp"

#include <algorithm>
#include <charconv>

namespace mcpgw::mcp {

bool is_supported(std::string_view v) {
  return std::find(kSessionVersions.begin(), kSessionVersions.end(), v) != kSessionVersions.end();
}

std::string_view negotiate(std::string_view requested) {
  return is_supported(requested) ? requested : kLatestVersion;
}

json::Document text_result(std::string_view text) {
  json::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  json::Value item(rapidjson::kObjectType);
  item.AddMember("type", "text", a);
  item.AddMember("text", json::str(text, a), a);
  json::Value content(rapidjson::kArrayType);
  content.PushBack(item, a);
  d.AddMember("content", content, a);
  return d;
}

json::Document tool_error(std::string_view text) {
  json::Document d = text_result(text);
  d.AddMember("isError", true, d.GetAllocator());
  return d;
}

// Cursors are opaque to clients; a readable prefix makes a foreign cursor
// easy to reject and easy to recognise in logs.
std::string encode_cursor(std::size_t offset) { return "o" + std::to_string(offset); }

std::optional<std::size_t> decode_cursor(std::string_view cursor) {
  if (cursor.size() < 2 || cursor[0] != 'o') return std::nullopt;
  std::size_t off = 0;
  auto [p, ec] = std::from_chars(cursor.data() + 1, cursor.data() + cursor.size(), off);
  if (ec != std::errc() || p != cursor.data() + cursor.size()) return std::nullopt;
  return off;
}

}  // namespace mcpgw::mcp
