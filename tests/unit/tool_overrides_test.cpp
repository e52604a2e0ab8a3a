// servers[].tools: the loader's checks (FILE:LINE errors), the rewritten
// definition a client sees, and the mapping of a call's arguments back to
// the upstream's.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "catalog/overrides.hpp"
#include "config/config.hpp"

using namespace mcpgw;

namespace {

config::EnvLookup no_env() {
  return [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
}

std::string server_with(const std::string& tools) {
  return "servers:\n  - name: gh\n    command: /bin/true\n    tools:\n" + tools;
}

std::string parse_error(const std::string& yaml) {
  auto r = config::parse(yaml, "gw.yaml", no_env());
  INFO(yaml);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

config::ToolOverride parse_one(const std::string& tools) {
  auto r = config::parse(server_with(tools), "gw.yaml", no_env());
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error()));
  REQUIRE(r->servers.at(0).tools.size() == 1);
  return r->servers[0].tools[0];
}

json::Document doc(std::string_view text) {
  auto d = json::parse(text);
  REQUIRE(d.ok());
  return std::move(*d);
}

const char* const kCreateIssue = R"({"name":"create_issue","description":"Create an issue","annotations":{"destructiveHint":true,"readOnlyHint":false},
  "inputSchema":{"type":"object","properties":{"repo":{"type":"string"},"title":{"type":"string"},"body":{"type":"string","description":"Body"},
  "labels":{"type":"array","items":{"type":"string"}}},"required":["repo","title","body"]}})";

const char* const kContractOverride = R"(      create_issue:
        name: open_ticket
        description: Open a ticket in the web team's tracker
        title: Open ticket
        annotations: { destructiveHint: false }
        arguments:
          repo: { value: acme/web }
          labels: { default: [triage] }
          body: { name: details, description: "What is wrong, in full sentences" }
)";

}  // namespace

TEST_CASE("tool overrides: the contract's example reads into plain values") {
  auto o = parse_one(kContractOverride);
  CHECK(o.tool == "create_issue");
  CHECK(o.name == "open_ticket");
  CHECK(o.description == "Open a ticket in the web team's tracker");
  CHECK(o.title == "Open ticket");
  CHECK(o.annotations == R"({"destructiveHint":false})");
  REQUIRE(o.arguments.size() == 3);
  CHECK(o.arguments[0].argument == "repo");
  CHECK(o.arguments[0].value == R"("acme/web")");
  CHECK(o.arguments[1].fallback == R"(["triage"])");
  CHECK(o.arguments[2].name == "details");
  CHECK(o.arguments[2].description == "What is wrong, in full sentences");
}

TEST_CASE("tool overrides: mistakes are FILE:LINE: key: message") {
  CHECK(parse_error(server_with("      t:\n        arguments:\n          a: { value: 1, default: 2 }\n")) ==
        "gw.yaml:7: servers[0].tools.t.arguments.a.default: argument \"a\" has both value (fixed) and default; give "
        "one of them");
  CHECK(parse_error(server_with("      t:\n        name: \"bad name\"\n")) ==
        "gw.yaml:6: servers[0].tools.t.name: expected a tool name of [A-Za-z0-9_.-]{1,128}, got \"bad name\"");
  CHECK(parse_error(server_with("      t:\n        arguments:\n          a: { name: \"x/y\" }\n")) ==
        "gw.yaml:7: servers[0].tools.t.arguments.a.name: expected an argument name of [A-Za-z0-9_.-]{1,64}, got "
        "\"x/y\"");
  CHECK(parse_error(server_with("      t:\n        arguments:\n          a: { value: 1, name: b }\n")) ==
        "gw.yaml:7: servers[0].tools.t.arguments.a.name: argument \"a\" is fixed (value): it is not in the exposed "
        "schema, so it takes no name or description");
  CHECK(parse_error(server_with("      t:\n        arguments:\n          a: {}\n")) ==
        "gw.yaml:7: servers[0].tools.t.arguments.a: argument \"a\" needs one of value, default, name, description");
  CHECK(parse_error(server_with("      t:\n        nmae: x\n")).starts_with(
      "gw.yaml:6: servers[0].tools.t.nmae: unknown key \"nmae\" (did you mean \"name\"?)"));
  CHECK(parse_error(server_with("      t:\n        arguments:\n          a: { vlaue: 1 }\n")).starts_with(
      "gw.yaml:7: servers[0].tools.t.arguments.a.vlaue: unknown key \"vlaue\""));
  CHECK(parse_error(server_with("      - t\n")) ==
        "gw.yaml:5: servers[0].tools: expected a mapping of the server's tool names to overrides, got a list");
}

TEST_CASE("tool overrides: a new name may not collide with another of the same server") {
  // Two tools renamed to one name.
  CHECK(parse_error(server_with("      a: { name: c }\n      b: { name: c }\n")) ==
        "gw.yaml:6: servers[0].tools.b.name: the new name \"c\" of tool \"b\" is also given to tool \"a\"");
  // A tool renamed to the name of one that keeps it.
  CHECK(parse_error(server_with("      a: { name: b }\n      b: { description: kept }\n")) ==
        "gw.yaml:5: servers[0].tools.a.name: the new name \"b\" of tool \"a\" is the name of tool \"b\", which keeps "
        "it; rename that one too or choose another");
  // Swapping two names is fine.
  auto r = config::parse(server_with("      a: { name: b }\n      b: { name: a }\n"), "gw.yaml", no_env());
  CHECK(r.ok());
  // Arguments alike, a fixed one included.
  CHECK(parse_error(server_with("      t:\n        arguments:\n          a: { name: r }\n          r: { value: 1 }\n")) ==
        "gw.yaml:7: servers[0].tools.t.arguments.a.name: the new name \"r\" of argument \"a\" is the name of "
        "argument \"r\", which keeps it; rename that one too or choose another");
}

TEST_CASE("tool overrides: the exposed definition") {
  auto o = parse_one(kContractOverride);
  catalog::ArgumentMap map;
  std::vector<std::string> warnings;
  auto def = doc(kCreateIssue);
  json::Document d = catalog::apply_override(def, o, map, warnings, "server gh, tool create_issue");
  CHECK(warnings.empty());
  CHECK(json::get_string(d, "name") == "open_ticket");
  CHECK(json::get_string(d, "description") == "Open a ticket in the web team's tracker");
  CHECK(json::get_string(d, "title") == "Open ticket");
  // Annotations merged, the override's keys winning.
  CHECK(json::write(d["annotations"]) == R"({"destructiveHint":false,"readOnlyHint":false})");
  const json::Value& schema = d["inputSchema"];
  // Fixed: gone from properties and required. Default: declared, no longer
  // required. Renamed: in its place, described, required under its new name.
  CHECK(json::write(schema["properties"]) ==
        R"({"title":{"type":"string"},"details":{"type":"string","description":"What is wrong, in full sentences"},)"
        R"("labels":{"type":"array","items":{"type":"string"},"default":["triage"]}})");
  CHECK(json::write(schema["required"]) == R"(["title","details"])");
  // The upstream's definition is untouched.
  CHECK(json::write(def["inputSchema"]["required"]) == R"(["repo","title","body"])");
}

TEST_CASE("tool overrides: what cannot be applied is a warning") {
  auto o = parse_one("      t:\n        arguments:\n          missing: { default: 1 }\n          title: { name: body }\n");
  catalog::ArgumentMap map;
  std::vector<std::string> warnings;
  auto def = doc(kCreateIssue);
  json::Document d = catalog::apply_override(def, o, map, warnings, "server gh, tool t");
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0] == "server gh, tool t: the tools override of argument \"missing\" names no property of its "
                       "inputSchema; its value is sent all the same");
  CHECK(warnings[1] == "server gh, tool t: argument \"title\" is not renamed \"body\": its inputSchema has a "
                       "property of that name already");
  CHECK(json::find(d["inputSchema"]["properties"], "title"));
  // The default is still sent.
  REQUIRE(map.defaults.size() == 1);
  CHECK(map.renamed.empty());
}

TEST_CASE("tool overrides: a call's arguments go back to the upstream's") {
  auto o = parse_one(kContractOverride);
  catalog::ArgumentMap map;
  std::vector<std::string> warnings;
  auto def = doc(kCreateIssue);
  (void)catalog::apply_override(def, o, map, warnings, "t");

  SUBCASE("renamed back, fixed put in, default filled") {
    auto args = doc(R"({"title":"T","details":"D"})");
    CHECK(catalog::fixed_argument_in(map, &args) == nullptr);
    CHECK(json::write(catalog::to_upstream(map, &args)) ==
          R"({"title":"T","body":"D","repo":"acme/web","labels":["triage"]})");
  }
  SUBCASE("a default the client gives is kept") {
    auto args = doc(R"({"labels":["bug"]})");
    CHECK(json::write(catalog::to_upstream(map, &args)) == R"({"labels":["bug"],"repo":"acme/web"})");
  }
  SUBCASE("no arguments at all") {
    CHECK(json::write(catalog::to_upstream(map, nullptr)) == R"({"repo":"acme/web","labels":["triage"]})");
  }
  SUBCASE("a fixed argument given is found, by its name") {
    auto args = doc(R"({"title":"T","repo":"evil/repo"})");
    const std::string* fixed = catalog::fixed_argument_in(map, &args);
    REQUIRE(fixed);
    CHECK(*fixed == "repo");
  }
  SUBCASE("the upstream's own names (a view) become the exposed ones; its fixed value is dropped") {
    auto args = doc(R"({"repo":"other/repo","title":"T","body":"B"})");
    json::Document exposed = catalog::from_upstream(map, &args);
    CHECK(json::write(exposed) == R"({"title":"T","details":"B"})");
    CHECK(json::write(catalog::to_upstream(map, &exposed)) ==
          R"({"title":"T","body":"B","repo":"acme/web","labels":["triage"]})");
  }
  SUBCASE("hostile arguments: not an object") {
    auto args = doc(R"([1,2])");
    CHECK(catalog::fixed_argument_in(map, &args) == nullptr);
    CHECK(json::write(catalog::to_upstream(map, &args)) == R"({"repo":"acme/web","labels":["triage"]})");
    CHECK(json::write(catalog::from_upstream(map, &args)) == "{}");
  }
}

TEST_CASE("tool overrides: a server's overrides by tool name, and the unused ones") {
  auto r = config::parse(server_with(kContractOverride + std::string("      gone: { description: x }\n")), "gw.yaml",
                         no_env());
  REQUIRE(r.ok());
  catalog::ServerOverrides overrides(r->servers[0].tools, "server gh");
  std::vector<std::string> warnings;
  auto tools = doc(std::string("[") + kCreateIssue + R"(,{"name":"other","inputSchema":{"type":"object"}}])");
  overrides.warn_unknown(tools, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "server gh has no tool \"gone\": its override (servers[].tools.gone) is unused");

  auto o = overrides.apply(tools[0], "create_issue", warnings);
  CHECK(o.name == "open_ticket");
  REQUIRE(o.arguments);
  CHECK(json::get_string(o.definition(), "name") == "open_ticket");
  auto plain = overrides.apply(tools[1], "other", warnings);
  CHECK(plain.name == "other");
  CHECK_FALSE(plain.arguments);
  CHECK(&plain.definition() == &tools[1]);
  CHECK(warnings.size() == 1);
}
