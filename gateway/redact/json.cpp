#include "redact/json.hpp"

namespace mcpgw::redact {
namespace {

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

/// The four hex digits at `s[at]`, or -1.
int hex4(std::string_view s, std::size_t at) {
  if (at + 4 > s.size()) return -1;
  int v = 0;
  for (std::size_t i = at; i < at + 4; ++i) {
    char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

bool is_string(const json::Value* v, std::string_view s) {
  return v && v->IsString() && std::string_view(v->GetString(), v->GetStringLength()) == s;
}

}  // namespace

std::string unescape(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c != '\\' || i + 1 == raw.size()) {
      out.push_back(c);
      continue;
    }
    char e = raw[++i];
    switch (e) {
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case 'r': out.push_back('\r'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'u': {
        int hi = hex4(raw, i + 1);
        if (hi < 0) {
          out.push_back('u');  // not an escape after all: kept as written
          break;
        }
        i += 4;
        std::uint32_t cp = static_cast<std::uint32_t>(hi);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          int lo = i + 2 < raw.size() && raw[i + 1] == '\\' && raw[i + 2] == 'u' ? hex4(raw, i + 3) : -1;
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<std::uint32_t>(lo) - 0xDC00);
            i += 6;
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        append_utf8(out, cp);
        break;
      }
      default: out.push_back(e);  // \" \\ \/, and anything else as itself
    }
  }
  return out;
}

std::string escape(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 8);
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default:
        if (u < 0x20) out.append("\\u00").append(1, kHex[u >> 4]).append(1, kHex[u & 15]);
        else out.push_back(c);
    }
  }
  return out;
}

bool mask_json(const Redactor& r, json::Value& v, json::Allocator& a, Tally& tally) {
  if (v.IsString()) {
    thread_local std::string out;
    if (!r.mask(std::string_view(v.GetString(), v.GetStringLength()), out, tally)) return false;
    v.SetString(out.data(), static_cast<rapidjson::SizeType>(out.size()), a);
    return true;
  }
  bool changed = false;
  if (v.IsArray()) {
    for (auto& item : v.GetArray()) changed = mask_json(r, item, a, tally) || changed;
  } else if (v.IsObject()) {
    const json::Value* type = json::find(v, "type");
    const bool binary = is_string(type, "image") || is_string(type, "audio");
    for (auto& m : v.GetObject()) {
      std::string_view name(m.name.GetString(), m.name.GetStringLength());
      if (name == "blob" || (binary && name == "data")) continue;
      changed = mask_json(r, m.value, a, tally) || changed;
    }
  }
  return changed;
}

bool mask_json_text(const Redactor& r, std::string_view text, std::string& out, Tally& tally) {
  bool changed = false;
  std::size_t copied = 0;  // text before this is in `out` already (once changed)
  std::string body, masked;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"') continue;
    // A literal: to its closing quote (or the end of a text cut short).
    std::size_t start = i + 1, end = start;
    bool escaped = false;
    while (end < text.size() && text[end] != '"') {
      if (text[end] == '\\') {
        escaped = true;
        ++end;
      }
      ++end;
    }
    end = std::min(end, text.size());
    std::size_t after = end + 1;
    while (after < text.size() && (text[after] == ' ' || text[after] == '\t' || text[after] == '\n' || text[after] == '\r'))
      ++after;
    const bool key = after < text.size() && text[after] == ':';
    std::string_view raw = text.substr(start, end - start);
    i = end;
    if (key) continue;
    body = escaped ? unescape(raw) : std::string(raw);
    if (!r.mask(body, masked, tally)) continue;
    if (!changed) {
      out.clear();
      out.reserve(text.size());
      changed = true;
    }
    out.append(text.substr(copied, start - copied)).append(escape(masked));
    copied = end;
  }
  if (changed) out.append(text.substr(copied));
  return changed;
}

}  // namespace mcpgw::redact
