#include "jsonrpc/id.hpp"

#include <charconv>

namespace mcpgw::jsonrpc {

Id::Id(const json::Value& v) {
  if (!v.IsNull()) text_ = json::write(v);
}

Id Id::number(std::string_view digits) {
  Id id;
  id.text_ = digits;
  return id;
}

std::optional<std::string> Id::string() const {
  if (!is_string()) return std::nullopt;
  auto doc = json::parse(text_);
  if (!doc || !doc->IsString()) return std::nullopt;
  return std::string(doc->GetString(), doc->GetStringLength());
}

std::optional<std::int64_t> Id::int64() const {
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text_.data(), text_.data() + text_.size(), n);
  if (ec != std::errc() || end != text_.data() + text_.size()) return std::nullopt;
  return n;
}

json::Value Id::value(json::Allocator& a) const {
  if (is_null()) return json::Value();
  auto doc = json::parse(text_);
  if (!doc) return json::Value();
  return json::copy(*doc, a);
}

}  // namespace mcpgw::jsonrpc
