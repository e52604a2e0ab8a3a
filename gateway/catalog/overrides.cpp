#include "catalog/overrides.hpp"

#include <algorithm>
#include <unordered_set>

namespace mcpgw::catalog {
namespace {

json::Document parsed(const std::string& text) {
  auto doc = json::parse(text);
  // The loader wrote it: it always parses.
  return doc ? std::move(*doc) : json::Document();
}

/// Removes `name` from a schema's `required` list, if it is there.
void not_required(json::Value& schema, std::string_view name) {
  json::Value* required = json::find(schema, "required");
  if (!required || !required->IsArray()) return;
  for (auto it = required->Begin(); it != required->End();)
    it = it->IsString() && std::string_view(it->GetString(), it->GetStringLength()) == name ? required->Erase(it) : it + 1;
}

/// The property schema `name` of `props`, or nullptr.
json::Value* property(json::Value* props, std::string_view name) { return props ? json::find(*props, name) : nullptr; }

/// Applies one argument's override to the input schema (`schema` and its
/// `props` may be null: a tool without them) and records its mapping.
void apply_argument(const config::ArgumentOverride& a, json::Value* schema, json::Value* props, json::Allocator& alloc,
                    ArgumentMap& map, std::vector<std::string>& warnings, std::string_view who) {
  json::Value* prop = property(props, a.argument);
  if (!prop || !prop->IsObject()) {
    warnings.push_back(std::string(who) + ": the tools override of argument \"" + a.argument +
                       "\" names no property of its inputSchema" +
                       (a.value || a.fallback ? "; its value is sent all the same" : "; it changes nothing listed"));
    prop = nullptr;
  }
  if (a.value) {
    map.fixed.push_back({a.argument, parsed(*a.value)});
    if (prop) props->EraseMember(json::ref(a.argument));  // keeps the other properties' order
    if (schema) not_required(*schema, a.argument);
    return;
  }
  if (a.fallback) {
    map.defaults.push_back({a.argument, parsed(*a.fallback)});
    // The gateway sends it when omitted, so the client need not.
    if (schema) not_required(*schema, a.argument);
    if (prop) json::set(*prop, "default", json::copy(map.defaults.back().value, alloc), alloc);
  }
  if (a.description && prop) json::set(*prop, "description", json::str(*a.description, alloc), alloc);
  if (a.name.empty() || a.name == a.argument || !prop) return;
  if (property(props, a.name)) {
    warnings.push_back(std::string(who) + ": argument \"" + a.argument + "\" is not renamed \"" + a.name +
                       "\": its inputSchema has a property of that name already");
    return;
  }
  for (auto& m : props->GetObject())
    if (std::string_view(m.name.GetString(), m.name.GetStringLength()) == a.argument) m.name = json::str(a.name, alloc);
  if (json::Value* required = schema ? json::find(*schema, "required") : nullptr; required && required->IsArray())
    for (auto& r : required->GetArray())
      if (r.IsString() && std::string_view(r.GetString(), r.GetStringLength()) == a.argument) r = json::str(a.name, alloc);
  map.renamed.push_back({a.name, a.argument});
}

const ArgumentMap::Renamed* renamed_from(const ArgumentMap& map, std::string_view exposed) {
  for (const auto& r : map.renamed)
    if (r.exposed == exposed) return &r;
  return nullptr;
}

}  // namespace

json::Document apply_override(const json::Value& def, const config::ToolOverride& o, ArgumentMap& map,
                              std::vector<std::string>& warnings, std::string_view who) {
  json::Document d = json::clone(def);
  auto& a = d.GetAllocator();
  if (!o.name.empty()) json::set(d, "name", json::str(o.name, a), a);
  if (o.description) json::set(d, "description", json::str(*o.description, a), a);
  if (o.title) json::set(d, "title", json::str(*o.title, a), a);
  json::Document annotations = parsed(o.annotations);
  if (annotations.IsObject() && !annotations.ObjectEmpty()) {
    json::Value& merged = json::object_member(d, "annotations", a);
    for (const auto& m : annotations.GetObject())
      json::set(merged, std::string_view(m.name.GetString(), m.name.GetStringLength()), json::copy(m.value, a), a);
  }
  json::Value* schema = json::find(d, "inputSchema");
  if (schema && !schema->IsObject()) schema = nullptr;
  json::Value* props = schema ? json::find(*schema, "properties") : nullptr;
  if (props && !props->IsObject()) props = nullptr;
  for (const auto& arg : o.arguments) apply_argument(arg, schema, props, a, map, warnings, who);
  return d;
}

const std::string* fixed_argument_in(const ArgumentMap& map, const json::Value* args) {
  if (!args || !args->IsObject()) return nullptr;
  for (const auto& f : map.fixed)
    if (json::find(*args, f.upstream)) return &f.upstream;
  return nullptr;
}

json::Document to_upstream(const ArgumentMap& map, const json::Value* args) {
  json::Document out;
  json::Value v = to_upstream(map, args, out.GetAllocator());
  static_cast<json::Value&>(out).Swap(v);
  return out;
}

json::Value to_upstream(const ArgumentMap& map, const json::Value* args, json::Allocator& a) {
  json::Value out(rapidjson::kObjectType);
  if (args && args->IsObject())
    for (const auto& m : args->GetObject()) {
      std::string_view key(m.name.GetString(), m.name.GetStringLength());
      const auto* r = renamed_from(map, key);
      json::set(out, r ? std::string_view(r->upstream) : key, json::copy(m.value, a), a);
    }
  for (const auto& f : map.fixed) json::set(out, f.upstream, json::copy(f.value, a), a);
  for (const auto& d : map.defaults)
    if (!json::find(out, d.upstream)) out.AddMember(json::str(d.upstream, a), json::copy(d.value, a), a);
  return out;
}

json::Document from_upstream(const ArgumentMap& map, const json::Value* args) {
  json::Document out(rapidjson::kObjectType);
  auto& a = out.GetAllocator();
  if (!args || !args->IsObject()) return out;
  for (const auto& m : args->GetObject()) {
    std::string_view key(m.name.GetString(), m.name.GetStringLength());
    if (std::any_of(map.fixed.begin(), map.fixed.end(), [&](const auto& f) { return f.upstream == key; })) continue;
    auto r = std::find_if(map.renamed.begin(), map.renamed.end(), [&](const auto& x) { return x.upstream == key; });
    json::set(out, r != map.renamed.end() ? std::string_view(r->exposed) : key, json::copy(m.value, a), a);
  }
  return out;
}

ServerOverrides::ServerOverrides(const std::vector<config::ToolOverride>& overrides, std::string who)
    : who_(std::move(who)), overrides_(overrides) {
  for (const auto& o : overrides) by_tool_.emplace(o.tool, &o);
}

Overridden ServerOverrides::apply(const json::Value& def, std::string_view name,
                                  std::vector<std::string>& warnings) const {
  Overridden out{&def, std::nullopt, name, nullptr};
  if (by_tool_.empty()) return out;
  auto it = by_tool_.find(name);
  if (it == by_tool_.end()) return out;
  const config::ToolOverride& o = *it->second;
  auto map = std::make_shared<ArgumentMap>();
  out.rewritten = apply_override(def, o, *map, warnings, who_ + ", tool " + std::string(name));
  if (!o.name.empty()) out.name = o.name;
  if (!map->renamed.empty() || !map->fixed.empty() || !map->defaults.empty()) out.arguments = std::move(map);
  return out;
}

void ServerOverrides::warn_unknown(const json::Value& tools, std::vector<std::string>& warnings) const {
  if (by_tool_.empty() || !tools.IsArray()) return;
  std::unordered_set<std::string_view> listed;
  for (const auto& t : tools.GetArray())
    if (auto name = json::get_string(t, "name")) listed.insert(*name);
  for (const auto& o : overrides_) {
    if (!listed.count(o.tool))
      warnings.push_back(who_ + " has no tool \"" + o.tool + "\": its override (servers[].tools." + o.tool +
                         ") is unused");
  }
}

}  // namespace mcpgw::catalog
