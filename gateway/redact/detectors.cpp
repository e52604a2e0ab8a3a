#include "redact/detectors.hpp"

#include <re2/re2.h>

namespace mcpgw::redact {
namespace {

// Shapes from the issuers' documentation. Boundaries (\b) keep a token from
// matching inside a longer identifier; where a token may end in a non-word
// character (+, /, -) the pattern ends without one.
constexpr Builtin kBuiltins[] = {
    {"aws_access_key_id", "AWS access key ids (AKIA..., ASIA..., and the other IAM prefixes)",
     R"(\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z0-9]{16}\b)"},
    {"aws_secret_access_key", "AWS secret access keys, after their key name (aws_secret_access_key=, SecretAccessKey:)",
     R"((?i)(?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)["']?\s*(?:=|:|=>)\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$))"},
    {"github_token", "GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
     R"(\b(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b)"},
    {"gitlab_token", "GitLab tokens (glpat-, gldt-, glrt-, glptt-, glft-, glsoat-)",
     R"(\b(?:glpat|gldt|glrt|glptt|glft|glsoat)-[A-Za-z0-9_\-]{20,255})"},
    {"slack_token", "Slack tokens (xoxb-, xoxa-, xoxp-, xoxr-, xoxs-, xapp-)",
     R"(\b(?:xox[baprs]-[A-Za-z0-9\-]{10,255}|xapp-[0-9]-[A-Za-z0-9\-]{10,255}))"},
    {"slack_webhook", "Slack incoming webhook URLs (https://hooks.slack.com/services/...)",
     R"(https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,255})"},
    {"stripe_key", "Stripe secret and restricted keys (sk_live_, rk_live_, sk_test_, rk_test_)",
     R"(\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,255}\b)"},
    {"google_api_key", "Google API keys (AIza...)", R"(\bAIza[0-9A-Za-z_\-]{35})"},
    // The whole block, to its END line (or to the end of the text when it
    // is cut short).
    {"private_key", "PEM private keys (-----BEGIN ... PRIVATE KEY----- to its END line)",
     R"(-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|$))"},
    {"jwt", "JSON Web Tokens (eyJ....eyJ....signature)",
     R"(\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*)"},
    // The value only: what follows password=, secret:, token= ... up to a
    // quote, a space or a separator; never a value already masked ([...).
    {"secret_assignment", "generic assignments: the value of password=, passwd=, secret=, token=, api_key= (also with :)",
     R"((?i)\b[a-z0-9_.\-]*(?:password|passwd|passphrase|secret|token|api_?key)["']?\s*[:=]\s*["']?([^\s"'&,;<>\\\[\]][^\s"'&,;<>\\]{2,}))",
     true},
};

}  // namespace

std::span<const Builtin> builtins() { return kBuiltins; }

const Builtin* find_builtin(std::string_view name) {
  for (const Builtin& b : kBuiltins)
    if (b.name == name) return &b;
  return nullptr;
}

std::string builtin_names() {
  std::string out;
  for (const Builtin& b : kBuiltins) out.append(out.empty() ? "" : ", ").append(b.name);
  return out;
}

std::optional<std::string> regex_error(const std::string& regex) {
  RE2 re(regex, RE2::Quiet);
  if (re.ok()) return std::nullopt;
  return re.error();
}

}  // namespace mcpgw::redact
