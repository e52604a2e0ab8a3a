// `redact:` of gateway.yaml: read into config::Redact with its detectors
// compiled, and every mistake reported at its line.
#include <doctest/doctest.h>

#include <string>

#include "config/config.hpp"

using namespace mcpgw::config;

namespace {

std::optional<std::string> no_env(const std::string&) { return std::nullopt; }

Config parse_ok(const std::string& yaml) {
  auto r = parse(yaml, "gw.yaml", no_env);
  INFO(yaml);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error()));
  return std::move(r.value());
}

std::string parse_error(const std::string& yaml) {
  auto r = parse(yaml, "gw.yaml", no_env);
  INFO(yaml);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

}  // namespace

TEST_CASE("config redact: absent is off; present defaults to every built-in, both directions, mask") {
  Config off = parse_ok("servers: []\n");
  CHECK_FALSE(off.redact.enabled);
  CHECK_FALSE(off.redact.detectors);

  Config on = parse_ok("redact: {}\n");
  CHECK(on.redact.enabled);
  CHECK(on.redact.spec.all_builtins);
  CHECK(on.redact.results);
  CHECK(on.redact.arguments);
  CHECK(on.redact.action == Redact::Action::Mask);
  REQUIRE(on.redact.detectors);
  CHECK(on.redact.detectors->size() == 11);
}

TEST_CASE("config redact: every key read, the detectors compiled") {
  Config c = parse_ok(R"(redact:
  builtin: [github_token, jwt]
  patterns:
    - {name: employee_id, regex: 'EMP-[0-9]{6}'}
  in: [arguments]
  action: refuse
)");
  CHECK_FALSE(c.redact.spec.all_builtins);
  CHECK(c.redact.spec.builtins == std::vector<std::string>{"github_token", "jwt"});
  REQUIRE(c.redact.spec.patterns.size() == 1);
  CHECK(c.redact.spec.patterns[0].regex == "EMP-[0-9]{6}");
  CHECK_FALSE(c.redact.results);
  CHECK(c.redact.arguments);
  CHECK(c.redact.action == Redact::Action::Refuse);
  REQUIRE(c.redact.detectors);
  CHECK(c.redact.detectors->size() == 3);
  CHECK(c.redact.detectors->detects("EMP-123456"));
  CHECK_FALSE(c.redact.detectors->detects("AKIAIOSFODNN7EXAMPLE"));
  // `all` among names is all; [] is none.
  CHECK(parse_ok("redact: {builtin: [jwt, all]}\n").redact.detectors->size() == 11);
  CHECK(parse_ok("redact: {builtin: []}\n").redact.detectors->size() == 0);
}

TEST_CASE("config redact: mistakes are FILE:LINE: key: message") {
  CHECK(parse_error("redact:\n  patterns:\n    - {name: bad, regex: '(unclosed'}\n") ==
        "gw.yaml:3: redact.patterns[0].regex: missing ): (unclosed");
  std::string unknown = parse_error("redact:\n  builtin:\n    - jwt\n    - aws_keys\n");
  CHECK(unknown.rfind("gw.yaml:4: redact.builtin[1]: unknown detector \"aws_keys\" (built-in: all, aws_access_key_id, ", 0) == 0);
  CHECK(unknown.find("secret_assignment") != std::string::npos);
  CHECK(parse_error("redact:\n  patterns: [{name: jwt, regex: x}]\n").rfind("gw.yaml:2: redact.patterns[0].name: ", 0) == 0);
  CHECK(parse_error("redact:\n  patterns: [{name: 'a b', regex: x}]\n").rfind("gw.yaml:2: redact.patterns[0].name: ", 0) == 0);
  CHECK(parse_error("redact:\n  patterns: [{name: any, regex: 'x*'}]\n").find("redact.patterns[0].regex: matches the empty string") !=
        std::string::npos);
  CHECK(parse_error("redact:\n  patterns: [{name: a}]\n") == "gw.yaml:2: redact.patterns[0].regex: required key is missing");
  CHECK(parse_error("redact:\n  in: [results, replies]\n") ==
        "gw.yaml:2: redact.in[1]: expected results | arguments, got \"replies\"");
  CHECK(parse_error("redact:\n  action: drop\n") == "gw.yaml:2: redact.action: expected mask | refuse, got \"drop\"");
  CHECK(parse_error("redact:\n  mask: true\n").rfind("gw.yaml:2: redact.mask: unknown key \"mask\"", 0) == 0);
}
