#include "config/policies.hpp"

#include <set>

#include "config/keys.hpp"
#include "config/yaml_value.hpp"

namespace mcpgw::config {

using namespace yaml;

namespace {

/// A list of globs, none empty.
std::vector<std::string> globs(const Value& v) {
  std::vector<std::string> out;
  for (const Value& item : v.items()) out.push_back(item.non_empty_text());
  return out;
}

Policy read_policy(const Value& v, const std::function<bool(const std::string&)>& known_mode,
                   std::set<std::string>& names) {
  Policy p;
  p.line = v.line();
  Fields f = v.fields(keys::kPolicy);
  Value name = f.required("name");
  p.name = name.non_empty_text();
  if (!names.insert(p.name).second) name.fail("duplicate policy name " + quote(p.name));
  Value match = f.required("match");
  Fields m = match.fields(keys::kPolicyMatch);
  p.tools = globs(m.required("tools"));
  if (p.tools.empty()) m.required("tools").fail("expected at least one glob over exposed tool names");
  if (auto modes = m.get("modes")) {
    for (const Value& item : modes->items()) {
      std::string mode = item.non_empty_text();
      if (!known_mode(mode)) item.fail("expected \"all\" or a key of modes, got " + quote(mode));
      p.modes.push_back(std::move(mode));
    }
  }
  if (auto principals = m.get("principals")) p.principals = globs(*principals);
  auto allow = f.get("allow");
  auto deny = f.get("deny");
  if (allow && deny) deny->fail("a rule has allow or deny, not both");
  if (!allow && !deny) v.fail("a rule needs allow (allowed only when true) or deny (refused when true)");
  const Value& test = allow ? *allow : *deny;
  p.kind = allow ? Policy::Kind::Allow : Policy::Kind::Deny;
  p.expression = test.non_empty_text();
  auto program = expr::Program::compile(p.expression);
  if (!program) test.fail(program.error());
  p.program = std::move(*program);
  p.message = "not allowed by this gateway's policies";
  if (auto message = f.get("message")) p.message = message->non_empty_text();
  return p;
}

}  // namespace

std::vector<Policy> read_policies(const Value& v, const std::function<bool(const std::string&)>& known_mode) {
  std::vector<Policy> out;
  std::set<std::string> names;
  for (const Value& item : v.items()) out.push_back(read_policy(item, known_mode, names));
  return out;
}

}  // namespace mcpgw::config
