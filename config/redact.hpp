#pragma once
// `redact:` of gateway.yaml: which secret detectors run, over what, and
// what a detected secret does (a part of config.cpp's schema, kept apart
// by subject). The detectors are compiled here, once per load, so that a
// pattern RE2 refuses is a FILE:LINE error and the gateway receives them
// ready to use.
#include <memory>

#include "redact/redactor.hpp"

namespace mcpgw::config {

namespace yaml {
class Value;
}

/// `redact:` — secrets masked or refused in what the gateway relays and
/// writes (docs/operations.md, "Redaction").
struct Redact {
  bool enabled = false;  ///< false when `redact:` is absent
  redact::Spec spec;     ///< `builtin` and `patterns`
  /// `in`: the directions detectors run in over relayed texts; what the
  /// gateway writes itself (audit, logs, spans) is redacted whenever enabled.
  bool results = true;
  bool arguments = true;
  enum class Action { Mask, Refuse } action = Action::Mask;
  /// `spec` compiled; null when not enabled. Immutable, shared.
  std::shared_ptr<const redact::Redactor> detectors;

  /// The same settings (the compiled detectors follow from them).
  bool operator==(const Redact& o) const {
    return enabled == o.enabled && spec == o.spec && results == o.results && arguments == o.arguments &&
           action == o.action;
  }
};

/// Reads and compiles `redact`: a built-in name that does not exist, a
/// pattern's bad name or a regex RE2 refuses is reported at its line
/// (`redact.patterns[1].regex: missing ): ...`).
Redact read_redact(const yaml::Value& v);

}  // namespace mcpgw::config
