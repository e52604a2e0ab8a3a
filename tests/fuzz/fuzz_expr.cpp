// libFuzzer target: the policies' expression language (gateway/expr), which
// reads what an operator writes in gateway.yaml and, at every call, what a
// client sends as arguments. An input is split at its first 0x00 byte:
// before it, the expression; after it, the call's arguments (JSON, used
// when they parse as an object). Besides sanitizer reports, a crash is any
// broken property: a compile error without its column; an evaluation that
// decides (true or false) with the arguments unknown but decides otherwise
// once they are known.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "expr/program.hpp"
#include "fuzz_common.hpp"

using namespace mcpgw;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto cut = in.find('\0');
  std::string_view source = in.substr(0, cut);
  std::string_view arguments = cut == std::string_view::npos ? std::string_view() : in.substr(cut + 1);
  auto program = expr::Program::compile(source);
  if (!program) {
    MCPGW_FUZZ_CHECK(program.error().rfind("column ", 0) == 0, "a compile error without its column");
    return 0;
  }
  static const json::Document claims = std::move(*json::parse(R"({"groups":["dba","ops"],"level":3,"sub":"alice"})"));
  static const json::Document annotations = std::move(*json::parse(R"({"readOnlyHint":false,"destructiveHint":true})"));
  static const std::vector<std::string> scopes{"mcp:tools", "mcp:admin"}, slices{"delete"};
  std::optional<json::Document> args;
  if (auto parsed = json::parse(arguments); parsed && parsed->IsObject()) args = std::move(*parsed);
  expr::Env env;
  env.principal_name = "alice";
  env.claims = &claims;
  env.scopes = scopes;
  env.tool_name = "db:drop_table";
  env.tool_server = "db";
  env.tool_upstream_name = "drop_table";
  env.annotations = &annotations;
  env.slices = slices;
  env.args = args ? &*args : nullptr;
  env.mode = "all";
  env.client_name = "fuzz";
  env.client_version = "1";
  expr::Outcome known = (*program)->eval(env);
  env.args_unknown = true;
  expr::Outcome unknown = (*program)->eval(env);
  if (unknown.truth == expr::Truth::True || unknown.truth == expr::Truth::False)
    MCPGW_FUZZ_CHECK(known.truth == unknown.truth, "decided without the arguments, otherwise with them");
  return 0;
}
