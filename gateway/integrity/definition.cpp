#include "integrity/definition.hpp"

#include <algorithm>

#include "util/hex.hpp"

namespace mcpgw::integrity {
namespace {

void emit(const json::Value& v, std::string& out) {
  if (v.IsObject()) {
    std::vector<const json::Value::Member*> members;
    for (const auto& m : v.GetObject()) members.push_back(&m);
    auto name = [](const json::Value::Member* m) {
      return std::string_view(m->name.GetString(), m->name.GetStringLength());
    };
    std::sort(members.begin(), members.end(), [&](auto* a, auto* b) { return name(a) < name(b); });
    out += '{';
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i) out += ',';
      out += json::quote(name(members[i]));
      out += ':';
      emit(members[i]->value, out);
    }
    out += '}';
  } else if (v.IsArray()) {
    out += '[';
    bool first = true;
    for (const auto& item : v.GetArray()) {
      if (!first) out += ',';
      first = false;
      emit(item, out);
    }
    out += ']';
  } else if (v.IsString()) {
    out += json::quote(std::string_view(v.GetString(), v.GetStringLength()));
  } else {
    out += json::write(v);
  }
}

std::string canonical_value(const json::Value* v) {
  std::string out;
  if (v) emit(*v, out);
  return out;
}

const json::Value* part(const json::Value& tool, std::string_view key) {
  return tool.IsObject() ? json::find(tool, key) : nullptr;
}

/// The changes inside one schema: its properties by name, then its other
/// keywords (required, type, ...) as a whole each.
void diff_schema(std::string_view where, const json::Value* a, const json::Value* b, std::vector<std::string>& out) {
  if (canonical_value(a) == canonical_value(b)) return;
  const std::string w(where);
  if (!a || !b || !a->IsObject() || !b->IsObject()) {
    out.push_back(w + (a ? (b ? " changed" : " removed") : " added"));
    return;
  }
  const json::Value* pa = json::find(*a, "properties");
  const json::Value* pb = json::find(*b, "properties");
  if (pa && pb && pa->IsObject() && pb->IsObject()) {
    for (const auto& m : pa->GetObject()) {
      std::string_view key(m.name.GetString(), m.name.GetStringLength());
      const json::Value* other = json::find(*pb, key);
      if (!other) out.push_back(w + ": property " + std::string(key) + " removed");
      else if (canonical_value(&m.value) != canonical_value(other))
        out.push_back(w + ": property " + std::string(key) + " changed");
    }
    for (const auto& m : pb->GetObject()) {
      std::string_view key(m.name.GetString(), m.name.GetStringLength());
      if (!json::find(*pa, key)) out.push_back(w + ": property " + std::string(key) + " added");
    }
  } else if (canonical_value(pa) != canonical_value(pb)) {
    out.push_back(w + ": properties changed");
  }
  auto keyword = [&](const json::Value& from, const json::Value& to, bool added) {
    for (const auto& m : from.GetObject()) {
      std::string_view key(m.name.GetString(), m.name.GetStringLength());
      if (key == "properties") continue;
      const json::Value* other = json::find(to, key);
      if (!other) out.push_back(w + "." + std::string(key) + (added ? " added" : " removed"));
      else if (!added && canonical_value(&m.value) != canonical_value(other))
        out.push_back(w + "." + std::string(key) + " changed");
    }
  };
  keyword(*a, *b, false);
  keyword(*b, *a, true);
}

}  // namespace

std::string canonical(const json::Value& tool) {
  std::string out = "{";
  bool first = true;
  for (const char* key : kDefinitionParts) {
    const json::Value* v = part(tool, key);
    if (!v) continue;
    if (!first) out += ',';
    first = false;
    out += json::quote(key);
    out += ':';
    emit(*v, out);
  }
  out += '}';
  return out;
}

std::string digest(std::string_view canonical_definition) { return "sha256:" + sha256_hex(canonical_definition); }

std::vector<std::string> diff(const json::Value& before, const json::Value& after) {
  std::vector<std::string> out;
  for (const char* key : {"name", "title", "description"})
    if (canonical_value(part(before, key)) != canonical_value(part(after, key))) out.emplace_back(key);
  diff_schema("inputSchema", part(before, "inputSchema"), part(after, "inputSchema"), out);
  diff_schema("outputSchema", part(before, "outputSchema"), part(after, "outputSchema"), out);
  const json::Value* a = part(before, "annotations");
  const json::Value* b = part(after, "annotations");
  if (canonical_value(a) != canonical_value(b)) {
    if (a && b && a->IsObject() && b->IsObject()) {
      for (const auto& m : a->GetObject()) {
        std::string_view key(m.name.GetString(), m.name.GetStringLength());
        const json::Value* other = json::find(*b, key);
        if (!other || canonical_value(&m.value) != canonical_value(other))
          out.push_back("annotations." + std::string(key));
      }
      for (const auto& m : b->GetObject()) {
        std::string_view key(m.name.GetString(), m.name.GetStringLength());
        if (!json::find(*a, key)) out.push_back("annotations." + std::string(key));
      }
    } else {
      out.emplace_back("annotations");
    }
  }
  return out;
}

}  // namespace mcpgw::integrity
