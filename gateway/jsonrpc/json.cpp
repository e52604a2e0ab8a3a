#include "jsonrpc/json.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace mcpgw::json {

namespace {

/// The deepest nesting accepted. Everything that walks a document (writing,
/// copying, schema validation) recurses, so a hostile "[[[[..." must be
/// refused before it exists; real MCP messages stay far below this.
constexpr int kMaxDepth = 256;

bool too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace

Result<Document> parse(std::string_view text) {
  // A peer's stray bytes are repaired as they come in, so that every
  // string the gateway holds (a tool name it lists and later looks up, a
  // claim it seals and compares) is the text it writes.
  if (!valid_utf8(text)) {
    std::string fixed = repair_utf8(text);
    return parse(std::string_view(fixed));
  }
  if (too_deep(text)) return Error{"nested deeper than " + std::to_string(kMaxDepth) + " levels"};
  Document d;
  // Iterative parsing keeps the parser itself off the stack. Trailing
  // garbage is an error (no kParseStopWhenDoneFlag), as a strict peer treats it.
  // No kParseFullPrecisionFlag: in RapidJSON 1.1.0 that path misreads long
  // or exponent-heavy numbers and crashes on some (upstream issues 1249,
  // 1251, 1253; found by tests/fuzz); the default path is exact to the last
  // bit or two and safe.
  d.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (d.HasParseError())
    return Error{std::string(rapidjson::GetParseError_En(d.GetParseError())) + " at offset " +
                 std::to_string(d.GetErrorOffset())};
  return d;
}

std::string write(const Value& v) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  v.Accept(w);
  return std::string(sb.GetString(), sb.GetSize());
}

Document clone(const Value& v) {
  Document d;
  d.CopyFrom(v, d.GetAllocator());
  return d;
}

const Value* find(const Value& v, std::string_view key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(ref(key));
  return it == v.MemberEnd() ? nullptr : &it->value;
}

Value* find(Value& v, std::string_view key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(ref(key));
  return it == v.MemberEnd() ? nullptr : &it->value;
}

std::optional<std::string_view> get_string(const Value& v, std::string_view key) {
  const Value* m = find(v, key);
  if (!m || !m->IsString()) return std::nullopt;
  return std::string_view(m->GetString(), m->GetStringLength());
}

void set(Value& obj, std::string_view key, Value value, Allocator& a) {
  if (Value* m = find(obj, key)) {
    *m = std::move(value);
    return;
  }
  obj.AddMember(str(key, a), value, a);
}

std::string quote(std::string_view s) {
  Value v(rapidjson::StringRef(s.data(), s.size()));
  return write(v);
}

}  // namespace mcpgw::json
