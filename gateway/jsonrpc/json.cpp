#include "jsonrpc/json.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace mcpgw::json {

Result<Document> parse(std::string_view text) {
  Document d;
  // kParseStopWhenDoneFlag is not used: trailing garbage is an error, as a
  // strict peer would treat it.
  d.Parse<rapidjson::kParseFullPrecisionFlag>(text.data(), text.size());
  if (d.HasParseError())
    return Error{std::string(rapidjson::GetParseError_En(d.GetParseError())) + " at offset " +
                 std::to_string(d.GetErrorOffset())};
  return d;
}

std::string write(const Value& v) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
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
