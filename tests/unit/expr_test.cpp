#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "expr/program.hpp"

using namespace mcpgw::expr;
namespace json = mcpgw::json;

namespace {

/// The values the tests evaluate under: a DBA named alice, calling
/// db:drop_table with schema "prod".
struct Fixture {
  json::Document claims = std::move(*json::parse(R"({"groups":["dba","ops"],"level":3,"email":"alice@example.com"})"));
  std::vector<std::string> scopes{"mcp:tools", "mcp:admin"};
  json::Document annotations = std::move(*json::parse(R"({"readOnlyHint":false,"destructiveHint":true})"));
  std::vector<std::string> slices{"delete", "db"};
  json::Document args = std::move(*json::parse(
      R"({"schema":"prod","table":"users","rows":[1,2,3],"limit":50,"opts":{"cascade":true},"tags":["a","b"]})"));
  Env env() const {
    Env e;
    e.principal_name = "alice";
    e.claims = &claims;
    e.scopes = scopes;
    e.tool_name = "db:drop_table";
    e.tool_server = "db";
    e.tool_upstream_name = "drop_table";
    e.annotations = &annotations;
    e.slices = slices;
    e.args = &args;
    e.mode = "all";
    e.client_name = "claude-code";
    e.client_version = "2.1.0";
    return e;
  }
};

Truth run(std::string_view src, const Env& env) {
  auto p = Program::compile(src);
  REQUIRE_MESSAGE(p.ok(), src << ": " << (p.ok() ? "" : p.error()));
  return (*p)->eval(env).truth;
}

Truth run(std::string_view src) { return run(src, Fixture().env()); }

std::string compile_error(std::string_view src) {
  auto p = Program::compile(src);
  return p.ok() ? std::string("(compiled)") : p.error();
}

}  // namespace

TEST_CASE("expr: literals, comparisons and arithmetic") {
  CHECK(run("true") == Truth::True);
  CHECK(run("false") == Truth::False);
  CHECK(run("1 + 2 * 3 == 7") == Truth::True);
  CHECK(run("(1 + 2) * 3 == 9") == Truth::True);
  CHECK(run("10 / 4 == 2.5") == Truth::True);
  CHECK(run("-3 < -2") == Truth::True);
  CHECK(run("1e3 == 1000") == Truth::True);
  CHECK(run("2 >= 2 && 2 <= 2 && 3 > 2 && !(3 < 2)") == Truth::True);
  CHECK(run("'abc' < 'abd'") == Truth::True);
  CHECK(run("'a' + \"b\" == 'ab'") == Truth::True);
  CHECK(run("'\\u00e9t\\u00e9' == 'été'") == Truth::True);
  CHECK(run("null == null") == Truth::True);
  CHECK(run("[1, 2] == [1, 2] && [1, 2] != [2, 1]") == Truth::True);
  CHECK(run("{'a': 1, 'b': [true]} == {'b': [true], 'a': 1}") == Truth::True);
  CHECK(run("size('héllo') == 5 && size([1, 2]) == 2 && {'a': 1}.size() == 1") == Truth::True);
}

TEST_CASE("expr: the call's values") {
  CHECK(run("principal.name == 'alice'") == Truth::True);
  CHECK(run("'dba' in principal.claims.groups") == Truth::True);
  CHECK(run("'root' in principal.claims.groups") == Truth::False);
  CHECK(run("principal.claims.level >= 3") == Truth::True);
  CHECK(run("'mcp:admin' in principal.scopes && size(principal.scopes) == 2") == Truth::True);
  CHECK(run("tool.name == 'db:drop_table' && tool.server == 'db' && tool.upstream_name == 'drop_table'") ==
        Truth::True);
  CHECK(run("tool.annotations.destructiveHint == true && tool.annotations.readOnlyHint == false") == Truth::True);
  CHECK(run("'delete' in tool.slices") == Truth::True);
  CHECK(run("args.schema == 'prod' && args.limit < 100 && args.opts.cascade") == Truth::True);
  CHECK(run("args['table'] == 'users' && args.rows[2] == 3") == Truth::True);
  CHECK(run("mode == 'all' && client.name.startsWith('claude') && client.version == '2.1.0'") == Truth::True);
  CHECK(run("'schema' in args && !('nope' in args)") == Truth::True);
}

TEST_CASE("expr: has, string methods, regular expressions, comprehensions") {
  CHECK(run("has(args.schema) && !has(args.missing) && has(args.opts.cascade)") == Truth::True);
  CHECK(run("has(principal.claims.groups) && !has(principal.claims.team)") == Truth::True);
  CHECK(run("has(tool.annotations)") == Truth::True);
  CHECK(run("tool.name.startsWith('db:') && tool.name.endsWith('_table') && tool.name.contains('drop')") ==
        Truth::True);
  CHECK(run("principal.claims.email.matches('@example\\\\.com$')") == Truth::True);
  CHECK(run("args.table.matches('^prod_')") == Truth::False);
  CHECK(run("args.rows.exists(r, r > 2)") == Truth::True);
  CHECK(run("args.rows.all(r, r > 0)") == Truth::True);
  CHECK(run("args.rows.all(r, r > 1)") == Truth::False);
  CHECK(run("principal.claims.groups.exists(g, g.startsWith('op'))") == Truth::True);
  CHECK(run("principal.scopes.all(s, s.startsWith('mcp:'))") == Truth::True);
  CHECK(run("args.opts.exists(k, k == 'cascade')") == Truth::True);
  CHECK(run("[].all(x, false) && ![].exists(x, true)") == Truth::True);
  CHECK(run("args.tags.exists(t, args.rows.exists(r, r == 2 && t == 'b'))") == Truth::True);
  // Lists and maps of run-time values, and strings joined at run time.
  CHECK(run("[args.schema, principal.name] == ['prod', 'alice']") == Truth::True);
  CHECK(run("{'s': args.schema}.s + '/' + args.table == 'prod/users'") == Truth::True);
  CHECK(run("principal.scopes in [['mcp:tools', 'mcp:admin']]") == Truth::True);
}

TEST_CASE("expr: run-time errors fail, and && || decide as CEL does") {
  // A missing field or a wrong type is an error.
  CHECK(run("args.nope == 'x'") == Truth::Error);
  CHECK(run("args.schema < 3") == Truth::Error);
  CHECK(run("args.schema.size() > args.nope") == Truth::Error);
  CHECK(run("args.limit / 0 == 1") == Truth::Error);
  CHECK(run("args.rows[7] == 1") == Truth::Error);
  CHECK(run("args.schema.startsWith(args.limit)") == Truth::Error);
  CHECK(run("args.limit") == Truth::Error);  // not a boolean
  CHECK(run("!args.schema") == Truth::Error);
  // Commutative short circuit: an error on either side of a deciding value.
  CHECK(run("args.nope == 1 || true") == Truth::True);
  CHECK(run("true || args.nope == 1") == Truth::True);
  CHECK(run("args.nope == 1 && false") == Truth::False);
  CHECK(run("false && args.nope == 1") == Truth::False);
  CHECK(run("args.nope == 1 && true") == Truth::Error);
  CHECK(run("false || args.nope == 1") == Truth::Error);
  // A static-token principal has no claims: reading one is an error.
  Fixture f;
  Env e = f.env();
  e.claims = nullptr;
  CHECK(run("'dba' in principal.claims.groups", e) == Truth::Error);
  CHECK(run("'dba' in principal.claims.groups || tool.annotations.destructiveHint", e) == Truth::True);
  CHECK(run("args.rows.exists(r, r == 'x' || r == 3)") == Truth::True);
  CHECK(run("args.rows.all(r, r.size() > 0)") == Truth::Error);
  CHECK(run("[1, 'x'].exists(r, r > 0)") == Truth::True);  // true beats the error
  CHECK(run("['x', 1].all(r, r > 5)") == Truth::False);    // false beats the error
}

TEST_CASE("expr: unknown arguments (can this ever be allowed)") {
  Fixture f;
  Env e = f.env();
  e.args_unknown = true;
  CHECK(run("args.schema == 'prod'", e) == Truth::Unknown);
  CHECK(run("principal.name == 'bob' && args.schema == 'prod'", e) == Truth::False);
  CHECK(run("principal.name == 'alice' || args.schema == 'prod'", e) == Truth::True);
  CHECK(run("principal.name == 'alice' && args.schema == 'prod'", e) == Truth::Unknown);
  CHECK(run("!has(args.x)", e) == Truth::Unknown);
  CHECK(run("args.rows.exists(r, r > 1)", e) == Truth::Unknown);
  CHECK(run("principal.claims.groups.exists(g, g == 'dba' || args.x)", e) == Truth::True);
  CHECK(run("principal.claims.groups.all(g, g == 'dba' && args.x)", e) == Truth::False);
  CHECK(run("principal.claims.nope == 1 && args.x == 1", e) == Truth::Unknown);
}

TEST_CASE("expr: what reads what") {
  auto p = Program::compile("args.x == 1 && 'g' in principal.claims.groups");
  REQUIRE(p.ok());
  CHECK((*p)->uses(Field::Args));
  CHECK((*p)->uses(Field::PrincipalClaims));
  CHECK_FALSE((*p)->uses(Field::ToolAnnotations));
  CHECK_FALSE((*p)->uses(Field::ToolName));
}

TEST_CASE("expr: configuration errors say where and what") {
  CHECK(compile_error("foo == 1") == "column 1: unknown variable 'foo' (principal, tool, args, mode, client)");
  CHECK(compile_error("principal == 'x'").find("column 1: principal has no value of its own") == 0);
  CHECK(compile_error("tool.nme == 'x'") == "column 6: tool has no field 'nme' (name, server, upstream_name, annotations, slices)");
  CHECK(compile_error("args.x ==") == "column 10: unexpected end of expression");
  CHECK(compile_error("args.x == 'abc") == "column 11: unterminated string");
  CHECK(compile_error("args.x # 1") == "column 8: unexpected character '#'");
  CHECK(compile_error("args.x == 1 1") == "column 13: unexpected number");
  CHECK(compile_error("'a' - 1 == 0") == "column 5: '-' between a string and a number");
  CHECK(compile_error("'a' == 1") == "column 5: '==' between a string and a number");
  CHECK(compile_error("!'a'") == "column 1: '!' needs a bool, not a string");
  CHECK(compile_error("1 + 2") == "column 1: the expression is a number, not a boolean");
  CHECK(compile_error("args.x.matches('(')").find("column 16: invalid regular expression: missing )") == 0);
  CHECK(compile_error("args.x.matches(args.y)") == "column 21: matches() takes a string literal (compiled once)");
  CHECK(compile_error("args.x.frob()").find("column 8: unknown method 'frob'") == 0);
  CHECK(compile_error("frob(args)").find("column 1: unknown function 'frob'") == 0);
  CHECK(compile_error("has(args)") == "column 5: has() takes a field selection (has(a.b))");
  CHECK(compile_error("args.l.exists(args, true)") ==
        "column 15: 'args' is a variable of its own: choose another name");
  CHECK(compile_error("args.l.exists(x, x.exists(x, true))") == "column 27: 'x' is already in use");
  CHECK(compile_error("args.l.exists(x, 1)") == "column 18: exists() needs a boolean condition, not a number");
  CHECK(compile_error("x == 1 || args.l.exists(x, x)").find("unknown variable 'x'") != std::string::npos);
  CHECK(compile_error("'x'.size(1)") == "column 5: size() takes 0 arguments");
  CHECK(compile_error("{1: 2}.size() == 1") == "column 2: a map's keys are strings, not a number");
  CHECK(compile_error("tool.name[0] == 'd'") == "column 10: cannot index a string with a number");
  CHECK(compile_error("'\\q'") == "column 3: unknown escape \\q");
  CHECK(compile_error("") == "column 1: unexpected end of expression");
}

TEST_CASE("expr: hostile input is refused, never a crash") {
  CHECK(compile_error(std::string(5000, '(') + "true" + std::string(5000, ')')).find("nested too deeply") !=
        std::string::npos);
  CHECK(compile_error(std::string(5000, '!') + "true").find("nested too deeply") != std::string::npos);
  std::string chain = "args";
  for (int i = 0; i < 500; ++i) chain += ".a";
  CHECK(compile_error(chain + " == 1").find("nested too deeply") != std::string::npos);
  std::string ors = "true";
  for (int i = 0; i < 500; ++i) ors += " || true";
  CHECK(compile_error(ors).find("nested too deeply") != std::string::npos);
  CHECK(compile_error(std::string(20000, ' ') + "true").find("longer than") != std::string::npos);
  // Deeply nested arguments compare to an error, not a stack overflow.
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += "[";
  for (int i = 0; i < 200; ++i) deep += "]";
  auto doc = json::parse("{\"d\":" + deep + "}");
  REQUIRE(doc.ok());
  Fixture f;
  Env e = f.env();
  e.args = &*doc;
  CHECK(run("args.d == args.d", e) == Truth::Error);
}
