#include <doctest/doctest.h>

#include <string>

#include "config/config.hpp"

using namespace mcpgw::config;

namespace {

std::string error_of(const std::string& yaml) {
  auto r = parse(yaml, "gw.yaml", [](const std::string&) { return std::nullopt; });
  INFO(yaml);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

}  // namespace

TEST_CASE("config: policies are read in order, their expressions compiled") {
  auto r = parse(R"(modes: {ops: {include_tools: ["db:*"]}}
policies:
  - name: no-prod-drop
    match: {tools: ["db:drop_table"]}
    deny: 'args.schema == "prod"'
    message: production tables are never dropped here
  - name: dba-writes
    match: {tools: ["db:*", "x?"], modes: [all, ops], principals: ["ci-*"]}
    allow: 'tool.annotations.readOnlyHint == true || "dba" in principal.claims.groups'
)",
                 "gw.yaml", [](const std::string&) { return std::nullopt; });
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error()));
  const auto& p = r->policies;
  REQUIRE(p.size() == 2);
  CHECK(p[0].name == "no-prod-drop");
  CHECK(p[0].kind == Policy::Kind::Deny);
  CHECK(p[0].tools == std::vector<std::string>{"db:drop_table"});
  CHECK(p[0].message == "production tables are never dropped here");
  CHECK(p[0].line == 3);
  REQUIRE(p[0].program);
  CHECK(p[1].kind == Policy::Kind::Allow);
  CHECK(p[1].modes == std::vector<std::string>{"all", "ops"});
  CHECK(p[1].principals == std::vector<std::string>{"ci-*"});
  CHECK(p[1].message == "not allowed by this gateway's policies");
  CHECK(p[1].program->uses(mcpgw::expr::Field::PrincipalClaims));
}

TEST_CASE("config: a policy error names the file, the line, the key and the column") {
  const std::string head = "policies:\n  - name: r\n    match: {tools: [\"db:*\"]}\n";
  CHECK(error_of(head + "    allow: 'princpal.name == \"x\"'\n") ==
        "gw.yaml:4: policies[0].allow: column 1: unknown variable 'princpal' (principal, tool, args, mode, client)");
  CHECK(error_of(head + "    deny: 'args.x =='\n") == "gw.yaml:4: policies[0].deny: column 10: unexpected end of expression");
  CHECK(error_of(head + "    deny: 'args.x.matches(\"[\")'\n").find("gw.yaml:4: policies[0].deny: column 16: invalid regular expression") == 0);
  CHECK(error_of(head + "    allow: 'true'\n    deny: 'false'\n") == "gw.yaml:5: policies[0].deny: a rule has allow or deny, not both");
  CHECK(error_of(head + "    message: m\n") ==
        "gw.yaml:2: policies[0]: a rule needs allow (allowed only when true) or deny (refused when true)");
  CHECK(error_of(head + "    allow: 'true'\n    when: x\n").find("gw.yaml:5: policies[0].when: unknown key \"when\"") == 0);
  CHECK(error_of("policies:\n  - name: r\n    allow: 'true'\n") == "gw.yaml:2: policies[0].match: required key is missing");
  CHECK(error_of("policies:\n  - name: r\n    match: {modes: [all]}\n    allow: 'true'\n") ==
        "gw.yaml:3: policies[0].match.tools: required key is missing");
  CHECK(error_of("policies:\n  - name: r\n    match: {tools: [\"*\"], modes: [nope]}\n    allow: 'true'\n") ==
        "gw.yaml:3: policies[0].match.modes[0]: expected \"all\" or a key of modes, got \"nope\"");
  CHECK(error_of(head + "    allow: 'true'\n  - name: r\n    match: {tools: [\"*\"]}\n    deny: 'false'\n") ==
        "gw.yaml:5: policies[1].name: duplicate policy name \"r\"");
}
