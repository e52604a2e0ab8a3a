// libFuzzer target: the configuration loader (config/), which reads a file
// an operator wrote, with environment interpolation. An input is the YAML
// text; the environment is a fixed table, so `${NAME}` and `${NAME:-x}`
// paths are reached deterministically.
// Besides sanitizer reports (and exceptions escaping parse(), which abort),
// a crash is any broken property: an error that is not one line of the form
// `FILE:LINE: KEY: what` (or `FILE: what` for a file that is not YAML); the
// same text parsed twice with different results; a configuration accepted
// with values its own validation forbids.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "fuzz_common.hpp"

using namespace mcpgw;

namespace {

std::optional<std::string> env(const std::string& name) {
  if (name == "TOKEN") return "s3cret";
  if (name == "PORT") return "9000";
  if (name == "EMPTY") return "";
  if (name == "YAML") return "{a: [1, 2]}";
  return std::nullopt;
}

void check_accepted(const config::Config& c) {
  MCPGW_FUZZ_CHECK(c.listen.port >= 0 && c.listen.port <= 65535, "a port out of range accepted");
  MCPGW_FUZZ_CHECK(!c.listen.path.empty() && c.listen.path.front() == '/', "a path without a leading slash accepted");
  MCPGW_FUZZ_CHECK(c.listen.max_body_bytes > 0, "a zero body limit accepted");
  MCPGW_FUZZ_CHECK(!c.naming.separator.empty(), "an empty naming separator accepted");
  for (const auto& s : c.servers) {
    MCPGW_FUZZ_CHECK(!s.name.empty(), "a server without a name accepted");
    MCPGW_FUZZ_CHECK(s.name.find(c.naming.separator) == std::string::npos, "a server name with the separator accepted");
    MCPGW_FUZZ_CHECK(s.timeout_ms > 0, "a non-positive timeout accepted");
    if (s.transport == config::Server::Transport::Stdio) MCPGW_FUZZ_CHECK(!s.command.empty(), "a stdio server without a command");
    else MCPGW_FUZZ_CHECK(s.url.find("://") != std::string::npos, "an http server without a URL");
  }
  if (!c.auth.enabled) MCPGW_FUZZ_CHECK(c.auth.bearer_tokens.empty(), "tokens without auth");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto first = config::parse(text, "fuzz.yaml", env);
  auto second = config::parse(text, "fuzz.yaml", env);
  MCPGW_FUZZ_CHECK(first.ok() == second.ok(), "the same text parsed two ways");
  if (!first) {
    const std::string& e = first.error();
    MCPGW_FUZZ_CHECK(e == second.error(), "the same text refused two ways");
    MCPGW_FUZZ_CHECK(e.rfind("fuzz.yaml:", 0) == 0, "an error that does not start with the file name");
    MCPGW_FUZZ_CHECK(e.find('\n') == std::string::npos, "an error of more than one line");
    return 0;
  }
  check_accepted(*first);
  return 0;
}
