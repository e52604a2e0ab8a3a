#include "config/redact.hpp"

#include <variant>

#include "config/keys.hpp"
#include "config/yaml_value.hpp"

namespace mcpgw::config {

using namespace yaml;

Redact read_redact(const Value& v) {
  Redact r;
  r.enabled = true;
  Fields f = v.fields(keys::kRedact);
  std::vector<Value> named;
  if (auto builtin = f.get("builtin")) {
    named = builtin->items();
    r.spec.all_builtins = false;
    for (const Value& item : named) {
      std::string name = item.non_empty_text();
      if (name == "all") r.spec.all_builtins = true;
      r.spec.builtins.push_back(std::move(name));
    }
    if (r.spec.all_builtins) r.spec.builtins.clear();
  }
  std::vector<Value> patterns;
  if (auto list = f.get("patterns")) patterns = list->items();
  for (const Value& item : patterns) {
    Fields p = item.fields(keys::kRedactPattern);
    r.spec.patterns.push_back({p.required("name").non_empty_text(), p.required("regex").non_empty_text()});
  }
  if (auto in = f.get("in")) {
    r.results = r.arguments = false;
    enum class In { Results, Arguments };
    for (const Value& item : in->items())
      (item.one_of<In>({{"results", In::Results}, {"arguments", In::Arguments}}) == In::Results ? r.results
                                                                                               : r.arguments) = true;
  }
  if (auto action = f.get("action"))
    r.action = action->one_of<Redact::Action>({{"mask", Redact::Action::Mask}, {"refuse", Redact::Action::Refuse}});
  auto compiled = redact::Redactor::compile(r.spec);
  if (auto* error = std::get_if<redact::SetupError>(&compiled)) {
    using Kind = redact::SetupError::Kind;
    switch (error->kind) {
      case Kind::UnknownBuiltin: named.at(error->index).fail(error->message);
      case Kind::BadName: patterns.at(error->index).fields(keys::kRedactPattern).required("name").fail(error->message);
      case Kind::DuplicateName: patterns.at(error->index).fields(keys::kRedactPattern).required("name").fail(error->message);
      case Kind::BadRegex: patterns.at(error->index).fields(keys::kRedactPattern).required("regex").fail(error->message);
      case Kind::TooLarge: v.fail(error->message);
    }
  }
  r.detectors = std::get<std::shared_ptr<const redact::Redactor>>(std::move(compiled));
  return r;
}

}  // namespace mcpgw::config
