#include "integrity/invisible.hpp"

namespace mcpgw::integrity {
namespace {

/// Whether code point `cp` is invisible formatting: zero-width, bidi
/// controls, tags, soft hyphen, invisible operators, the BOM, variation
/// selectors' supplement aside (emoji use those).
bool invisible(char32_t cp) {
  return cp == 0x00AD || cp == 0x034F || cp == 0x061C || cp == 0x115F || cp == 0x1160 || cp == 0x17B4 ||
         cp == 0x17B5 || cp == 0x180E || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x206F) || cp == 0x3164 || cp == 0xFEFF || cp == 0xFFA0 ||
         (cp >= 0xFFF9 && cp <= 0xFFFB) || (cp >= 0xE0000 && cp <= 0xE007F);
}

/// The code point at `s[i]` and its length in bytes; length 0 for a byte
/// that does not start valid UTF-8.
std::pair<char32_t, std::size_t> decode(std::string_view s, std::size_t i) {
  auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return {b, 1};
  std::size_t n = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return {0, 0};
  char32_t cp = n == 2 ? b & 0x1F : n == 3 ? b & 0x0F : b & 0x07;
  for (std::size_t k = 1; k < n; ++k) {
    auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return {0, 0};
    cp = (cp << 6) | (c & 0x3F);
  }
  return {cp, n};
}

/// Length of the escape sequence starting with ESC at `s[i]` (ECMA-48: CSI
/// up to its final byte, OSC/DCS/APC/PM/SOS up to BEL or ST, else ESC and
/// one character).
std::size_t escape_length(std::string_view s, std::size_t i) {
  std::size_t j = i + 1;
  if (j >= s.size()) return 1;
  char kind = s[j++];
  if (kind == '[') {
    while (j < s.size() && !(s[j] >= 0x40 && s[j] <= 0x7E)) ++j;
    return std::min(j + 1, s.size()) - i;
  }
  if (kind == ']' || kind == 'P' || kind == '_' || kind == '^' || kind == 'X') {
    while (j < s.size()) {
      if (s[j] == '\a') return j + 1 - i;
      if (s[j] == '\x1b' && j + 1 < s.size() && s[j + 1] == '\\') return j + 2 - i;
      ++j;
    }
    return s.size() - i;
  }
  return j - i;
}

std::size_t strip_member(json::Value& obj, const char* key, json::Allocator& a) {
  json::Value* v = obj.IsObject() ? json::find(obj, key) : nullptr;
  if (!v || !v->IsString()) return 0;
  std::string text(v->GetString(), v->GetStringLength());
  std::size_t n = strip_invisible(text);
  if (n) v->SetString(text.data(), static_cast<rapidjson::SizeType>(text.size()), a);
  return n;
}

/// Every `title` and `description` string inside a schema, at any depth.
std::size_t strip_schema(json::Value& v, json::Allocator& a) {
  std::size_t n = 0;
  if (v.IsObject()) {
    n += strip_member(v, "title", a) + strip_member(v, "description", a);
    for (auto& m : v.GetObject())
      if (m.value.IsObject() || m.value.IsArray()) n += strip_schema(m.value, a);
  } else if (v.IsArray()) {
    for (auto& item : v.GetArray()) n += strip_schema(item, a);
  }
  return n;
}

}  // namespace

std::size_t strip_invisible(std::string& text) {
  std::size_t removed = 0;
  std::string out;
  std::size_t i = 0, kept = 0;  // text[kept, i) is still to be copied
  auto drop = [&](std::size_t len) {
    if (removed == 0) out.reserve(text.size());
    out.append(text, kept, i - kept);
    i += len;
    kept = i;
    ++removed;
  };
  while (i < text.size()) {
    auto b = static_cast<unsigned char>(text[i]);
    if (b == 0x1B) {
      drop(escape_length(text, i));
      continue;
    }
    if (b < 0x20 && b != '\t' && b != '\n' && b != '\r') {
      drop(1);
      continue;
    }
    if (b == 0x7F) {
      drop(1);
      continue;
    }
    auto [cp, len] = decode(text, i);
    if (len == 0) {
      ++i;
      continue;
    }
    if (cp == 0x9B) {  // C1 CSI: like ESC [
      std::size_t j = i + len;
      while (j < text.size() && !(text[j] >= 0x40 && text[j] <= 0x7E)) ++j;
      drop(std::min(j + 1, text.size()) - i);
      continue;
    }
    if ((cp >= 0x80 && cp <= 0x9F) || invisible(cp)) {
      drop(len);
      continue;
    }
    i += len;
  }
  if (removed == 0) return 0;
  out.append(text, kept, std::string::npos);
  text = std::move(out);
  return removed;
}


std::size_t strip_tool(json::Value& tool, json::Allocator& a) {
  if (!tool.IsObject()) return 0;
  std::size_t n = strip_member(tool, "name", a) + strip_member(tool, "title", a) + strip_member(tool, "description", a);
  if (json::Value* ann = json::find(tool, "annotations")) n += strip_member(*ann, "title", a);
  for (const char* key : {"inputSchema", "outputSchema"})
    if (json::Value* schema = json::find(tool, key)) n += strip_schema(*schema, a);
  return n;
}

std::size_t strip_entry(json::Value& entry, json::Allocator& a) {
  if (!entry.IsObject()) return 0;
  std::size_t n = strip_member(entry, "name", a) + strip_member(entry, "title", a) + strip_member(entry, "description", a);
  if (json::Value* args = json::find(entry, "arguments"); args && args->IsArray())
    for (auto& arg : args->GetArray())
      n += strip_member(arg, "name", a) + strip_member(arg, "title", a) + strip_member(arg, "description", a);
  return n;
}

}  // namespace mcpgw::integrity
