#include "config/read_tool_overrides.hpp"

#include <algorithm>
#include <map>

#include "config/keys.hpp"

namespace mcpgw::config {

using yaml::Entry;
using yaml::Fields;
using yaml::quote;
using yaml::Value;

bool valid_override_name(std::string_view s, std::size_t max) {
  return !s.empty() && s.size() <= max && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

namespace {

/// The keys of one mapping of overrides (tools, or one tool's arguments)
/// and which of them a rename takes away.
struct Names {
  std::vector<std::string> keys;
  std::vector<std::string> renamed;  ///< keys given a new name, in file order
};

/// A new name must stay apart from the other new names and from the keys
/// that keep theirs (the server's other names are checked with its listing,
/// in the catalog); fails on the first that does not. `name_values` are the
/// `name` values of `n.renamed`, `what` is "tool" or "argument".
void check_collisions(const Names& n, const std::vector<Value>& name_values, std::string_view what) {
  std::map<std::string, std::string> seen;  // name -> the key that holds it
  for (const auto& key : n.keys)
    if (std::find(n.renamed.begin(), n.renamed.end(), key) == n.renamed.end()) seen.emplace(key, key);
  std::size_t at = 0;
  for (const Value& v : name_values) {
    const std::string& key = n.renamed[at++];
    const std::string name = v.text();
    if (auto it = seen.find(name); it != seen.end()) {
      if (it->second == name)
        v.fail("the new name " + quote(name) + " of " + std::string(what) + " " + quote(key) + " is the name of " +
               std::string(what) + " " + quote(name) + ", which keeps it; rename that one too or choose another");
      v.fail("the new name " + quote(name) + " of " + std::string(what) + " " + quote(key) + " is also given to " +
             std::string(what) + " " + quote(it->second));
    }
    seen.emplace(name, key);
  }
}

ArgumentOverride read_argument(const Entry& e) {
  ArgumentOverride a;
  a.argument = e.name;
  if (a.argument.empty()) e.key.fail("an argument name must not be empty");
  Fields f = e.value.fields(keys::kArgumentOverride);
  auto value = f.get("value");
  auto fallback = f.get("default");
  auto name = f.get("name");
  auto description = f.get("description");
  if (value && fallback)
    fallback->fail("argument " + quote(a.argument) + " has both value (fixed) and default; give one of them");
  if (value && (name || description))
    (name ? *name : *description)
        .fail("argument " + quote(a.argument) +
              " is fixed (value): it is not in the exposed schema, so it takes no name or description");
  if (!value && !fallback && !name && !description)
    e.value.fail("argument " + quote(a.argument) + " needs one of value, default, name, description");
  if (value) a.value = value->json();
  if (fallback) a.fallback = fallback->json();
  if (name) {
    a.name = name->text();
    if (!valid_override_name(a.name, 64))
      name->fail("expected an argument name of [A-Za-z0-9_.-]{1,64}, got " + quote(a.name));
  }
  if (description) a.description = description->text();
  return a;
}

ToolOverride read_tool(const Entry& e) {
  ToolOverride t;
  t.tool = e.name;
  if (t.tool.empty()) e.key.fail("a tool name must not be empty");
  Fields f = e.value.fields(keys::kToolOverride);
  if (auto name = f.get("name")) {
    t.name = name->text();
    if (!valid_override_name(t.name, 128))
      name->fail("expected a tool name of [A-Za-z0-9_.-]{1,128}, got " + quote(t.name));
  }
  if (auto d = f.get("description")) t.description = d->text();
  if (auto title = f.get("title")) t.title = title->text();
  if (auto a = f.get("annotations"); a && !a->is_null()) {
    if (!a->is_map()) a->fail("expected a mapping, got " + a->found());
    t.annotations = a->json();
  }
  if (auto args = f.get("arguments"); args && !args->is_null()) {
    if (!args->is_map()) args->fail("expected a mapping of argument name to override, got " + args->found());
    Names names;
    std::vector<Value> name_values;
    for (const Entry& arg : args->entries()) {
      t.arguments.push_back(read_argument(arg));
      names.keys.push_back(t.arguments.back().argument);
      if (!t.arguments.back().name.empty() && t.arguments.back().name != t.arguments.back().argument) {
        names.renamed.push_back(t.arguments.back().argument);
        name_values.push_back(*arg.value.fields(keys::kArgumentOverride).get("name"));
      }
    }
    check_collisions(names, name_values, "argument");
  }
  return t;
}

}  // namespace

std::vector<ToolOverride> read_tool_overrides(const Value& v) {
  std::vector<ToolOverride> out;
  if (v.is_null()) return out;
  if (!v.is_map()) v.fail("expected a mapping of the server's tool names to overrides, got " + v.found());
  Names names;
  std::vector<Value> name_values;
  for (const Entry& e : v.entries()) {
    out.push_back(read_tool(e));
    names.keys.push_back(out.back().tool);
    if (!out.back().name.empty() && out.back().name != out.back().tool) {
      names.renamed.push_back(out.back().tool);
      name_values.push_back(*e.value.fields(keys::kToolOverride).get("name"));
    }
  }
  check_collisions(names, name_values, "tool");
  return out;
}

}  // namespace mcpgw::config
