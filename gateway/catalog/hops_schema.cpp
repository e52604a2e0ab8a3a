#include "catalog/hops_schema.hpp"

#include <algorithm>
#include <array>

namespace mcpgw::catalog {
namespace {

/// Top-level keywords under which a declared property decides alone
/// whether an object may carry it.
constexpr std::array<std::string_view, 19> kPlain = {
    "$schema",  "$id",        "id",          "$comment", "title",     "description",          "examples",
    "default",  "type",       "required",    "deprecated", "readOnly", "writeOnly",           "$defs",
    "definitions", "minProperties", "properties", "additionalProperties", "unevaluatedProperties"};

constexpr std::string_view kHopsDescription =
    "Added by mcpgw to the result of a nextTool chain: the text of every call the result's content shows, in order.";

bool object_typed(const json::Value& schema) {
  auto type = json::get_string(schema, "type");
  return type == "object";
}

bool plain(const json::Value& schema) {
  for (const auto& m : schema.GetObject()) {
    std::string_view k(m.name.GetString(), m.name.GetStringLength());
    if (std::find(kPlain.begin(), kPlain.end(), k) == kPlain.end()) return false;
  }
  const json::Value* props = json::find(schema, "properties");
  return !props || props->IsObject();
}

}  // namespace

bool declare_hops(json::Value& schema, json::Allocator& a) {
  if (!schema.IsObject() || !object_typed(schema) || !plain(schema)) return false;
  json::Value* props = json::find(schema, "properties");
  if (!props) {
    schema.AddMember("properties", json::Value(rapidjson::kObjectType), a);
    props = json::find(schema, "properties");
  }
  if (json::find(*props, kHopsKey)) return false;
  json::Value entry(rapidjson::kObjectType);
  entry.AddMember("type", "object", a);
  json::Value entry_props(rapidjson::kObjectType);
  json::Value str(rapidjson::kObjectType);
  str.AddMember("type", "string", a);
  entry_props.AddMember("tool", json::copy(str, a), a);
  entry_props.AddMember("text", str, a);
  entry.AddMember("properties", entry_props, a);
  json::Value hops(rapidjson::kObjectType);
  hops.AddMember("type", "array", a);
  hops.AddMember("description", json::ref(kHopsDescription), a);
  hops.AddMember("items", entry, a);
  props->AddMember(json::ref(kHopsKey), hops, a);
  return true;
}

bool declares_hops(const json::Value& schema) {
  if (!schema.IsObject() || !object_typed(schema) || !plain(schema)) return false;
  const json::Value* props = json::find(schema, "properties");
  const json::Value* hops = props ? json::find(*props, kHopsKey) : nullptr;
  return hops && json::get_string(*hops, "description") == kHopsDescription;
}

}  // namespace mcpgw::catalog
