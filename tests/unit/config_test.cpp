#include "config/config.hpp"
#include "config/paths.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

using namespace mcpgw::config;

namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

Config parse_ok(const std::string& yaml, const EnvLookup& env = env_of({})) {
  auto r = parse(yaml, "gw.yaml", env);
  INFO(yaml);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error()));
  return std::move(r.value());
}

/// `name` in the current directory: where the relative paths of "gw.yaml" go.
std::string here(const std::string& name) { return (std::filesystem::current_path() / name).string(); }

std::string parse_error(const std::string& yaml, const EnvLookup& env = env_of({})) {
  auto r = parse(yaml, "gw.yaml", env);
  INFO(yaml);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().find('\n') == std::string::npos);
  return r.error();
}

const char* const kFull = R"(listen:
  host: 0.0.0.0
  port: 9090
  path: /gateway
  allowed_origins: [https://app.example]
  allowed_hosts: [gw.example]
  max_body_bytes: 1024
  heartbeat_ms: 500
  page_size: 50
  session_idle_s: 0
auth:
  bearer_tokens:
    - token: ${GATEWAY_TOKEN}
      name: ci
      modes: [all, readonly]
    - token: second
      name: ops
naming:
  separator: "__"
  description_prefix: "<{server}> "
  max_length: 64
filters:
  include_slices: [read]
  exclude_slices: [delete]
  include_tools: ["bank__get_*"]
  exclude_tools: [bank__drop]
modes:
  readonly:
    description: Read-only tools
    include_slices: [read, list]
    exclude_tools: []
  writer:
    include_tools: [x]
    exclude_slices: [delete]
    include_slices: [create]
    exclude_tools: [y]
default_mode: readonly
chain:
  resolve: false
  max_depth: 3
  merge: last
welcome:
  strategy: tool
  tool: bank__welcome
  arguments: {lang: en, n: 3, f: 1.5, ok: true, nothing: null, quoted: "42", list: [1, "a"]}
  timeout_ms: 100
sagas:
  secret: [new-key, old-key]
  ttl_s: 60
servers:
  - name: bank
    transport: stdio
    command: ./bank-server
    args: [--fast, "-v"]
    env: {B: "2", A: "1"}
    cwd: /srv
    proxy_tools: false
    prefix: false
    slices:
      read: ["get_*", "search_*"]
      list: ["list_*"]
    filters: {}
    welcome_priority: -2
    timeout_ms: 1000
    session: per_client
    required: false
  - name: crm
    transport: http
    url: https://crm.example/mcp
    headers: {Authorization: "Bearer ${CRM_TOKEN}", X-A: b}
    forward_headers: [X-Customer-Id]
    filters:
      exclude_tools: [crm__delete]
plugins:
  - path: ./libbanking.so
    config: {limit: 10, name: x}
  - path: ./other.so
instructions: Be nice.
shutdown_grace_ms: 0
)";

// The example of the "Configuration (YAML)" section of CONTRACT.md, verbatim.
const char* const kContractExample = R"(listen:
  host: 127.0.0.1
  port: 8080
  path: /mcp
  allowed_origins: []          # Origin header allow-list; empty = only loopback origins or none
auth:                          # absent = no auth (only allowed on loopback)
  bearer_tokens:
    - token: ${GATEWAY_TOKEN}
      name: ci                 # principal name, used in logs and audit
      modes: [all]             # which modes this principal may use (optional)
naming:
  separator: ":"               # exposed name = <server><separator><tool>
  description_prefix: "[Proxied from {server}] "
  max_length: 0                # 0 = no limit; else shorten deterministically (hash suffix) and keep a reverse map
filters:                       # global, applied to every server unless it overrides
  include_slices: []           # empty = all
  exclude_slices: []
  include_tools: []            # exposed names or globs; when set, decides alone
  exclude_tools: []
modes:                         # named tool sets a client can select: same keys as filters, applied after them
  readonly:
    description: Read-only tools
    include_slices: [read, list]
    exclude_tools: []
default_mode: all              # "all" = every tool that passes the filters
chain:
  resolve: true                # resolve _meta.nextTool server-side
  max_depth: 5
  merge: all                   # all = content of every hop in order; last = last hop only
welcome:
  strategy: first              # first | priority | tool | none
  tool: ""                     # with strategy: tool, the exposed name
  arguments: {}
  timeout_ms: 2000
sagas:
  secret: ${MCPGW_SAGA_SECRET} # HMAC key for saga tokens and MRTR requestState; or a list: the first signs, all verify (rotation)
  ttl_s: 900
servers:
  - name: bank                 # [A-Za-z0-9_-]+, must not contain the separator
    transport: stdio           # stdio | http
    command: ./build/examples/bank-server
    args: []
    env: {}
    cwd: .
    # url: http://127.0.0.1:9000/mcp    (transport: http)
    # headers: {Authorization: "Bearer ${BANK_TOKEN}"}
    # forward_headers: [X-Customer-Id]   (copied from the client's request)
    proxy_tools: true          # false = only composite plugins may call it
    prefix: true               # false = expose this server's tools under their own names (collisions are a config error)
    slices:                    # assign slices to this server's tools by glob
      read: ["get_*", "search_*"]
      list: ["list_*"]
    filters: {}                # same keys as top-level filters; replaces them for this server
    welcome_priority: 0        # higher wins with welcome.strategy: priority
    timeout_ms: 30000
    session: shared            # shared | per_client
plugins:
  - path: ./build/plugins/libbanking_composites.so
    config: {}                 # handed to the plugin as JSON
)";

}  // namespace

TEST_CASE("config: a file with every key lands in the struct") {
  Config c = parse_ok(kFull, env_of({{"GATEWAY_TOKEN", "tok"}, {"CRM_TOKEN", "crm"}}));
  CHECK(c.source == "gw.yaml");
  CHECK(c.listen.host == "0.0.0.0");
  CHECK(c.listen.port == 9090);
  CHECK(c.listen.path == "/gateway");
  CHECK(c.listen.allowed_origins == std::vector<std::string>{"https://app.example"});
  CHECK(c.listen.allowed_hosts == std::vector<std::string>{"gw.example"});
  CHECK(c.listen.max_body_bytes == 1024);
  CHECK(c.listen.heartbeat_ms == 500);
  CHECK(c.listen.page_size == 50);
  CHECK(c.listen.session_idle_s == 0);

  CHECK(c.auth.enabled);
  REQUIRE(c.auth.bearer_tokens.size() == 2);
  CHECK(c.auth.bearer_tokens[0].token == "tok");
  CHECK(c.auth.bearer_tokens[0].name == "ci");
  CHECK(c.auth.bearer_tokens[0].modes == std::vector<std::string>{"all", "readonly"});
  CHECK(c.auth.bearer_tokens[1].modes.empty());

  CHECK(c.naming.separator == "__");
  CHECK(c.naming.description_prefix == "<{server}> ");
  CHECK(c.naming.max_length == 64);

  CHECK(c.filters.include_slices == std::vector<std::string>{"read"});
  CHECK(c.filters.exclude_slices == std::vector<std::string>{"delete"});
  CHECK(c.filters.include_tools == std::vector<std::string>{"bank__get_*"});
  CHECK(c.filters.exclude_tools == std::vector<std::string>{"bank__drop"});

  REQUIRE(c.modes.size() == 2);
  CHECK(c.modes[0].name == "readonly");
  CHECK(c.modes[0].description == "Read-only tools");
  CHECK(c.modes[0].filters.include_slices == std::vector<std::string>{"read", "list"});
  CHECK(c.modes[1].name == "writer");
  CHECK(c.modes[1].filters.include_tools == std::vector<std::string>{"x"});
  CHECK(c.modes[1].filters.exclude_tools == std::vector<std::string>{"y"});
  CHECK(c.modes[1].filters.include_slices == std::vector<std::string>{"create"});
  CHECK(c.modes[1].filters.exclude_slices == std::vector<std::string>{"delete"});
  CHECK(c.default_mode == "readonly");

  CHECK_FALSE(c.chain.resolve);
  CHECK(c.chain.max_depth == 3);
  CHECK(c.chain.merge == Chain::Merge::Last);

  CHECK(c.welcome.strategy == Welcome::Strategy::Tool);
  CHECK(c.welcome.tool == "bank__welcome");
  CHECK(c.welcome.arguments_json ==
        R"({"lang":"en","n":3,"f":1.5,"ok":true,"nothing":null,"quoted":"42","list":[1,"a"]})");
  CHECK(c.welcome.timeout_ms == 100);

  CHECK(c.sagas.secrets == std::vector<std::string>{"new-key", "old-key"});
  CHECK(c.sagas.ttl_s == 60);

  REQUIRE(c.servers.size() == 2);
  const Server& bank = c.servers[0];
  CHECK(bank.name == "bank");
  CHECK(bank.transport == Server::Transport::Stdio);
  CHECK(bank.command == here("bank-server"));
  CHECK(bank.args == std::vector<std::string>{"--fast", "-v"});
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  CHECK(bank.env == Pairs{{"B", "2"}, {"A", "1"}});
  CHECK(bank.cwd == "/srv");
  CHECK_FALSE(bank.proxy_tools);
  CHECK_FALSE(bank.prefix);
  REQUIRE(bank.slices.size() == 2);
  CHECK(bank.slices[0].first == "read");
  CHECK(bank.slices[0].second == std::vector<std::string>{"get_*", "search_*"});
  CHECK(bank.slices[1].first == "list");
  REQUIRE(bank.filters.has_value());
  CHECK(bank.filters->include_tools.empty());
  CHECK(bank.welcome_priority == -2);
  CHECK(bank.timeout_ms == 1000);
  CHECK(bank.session == Server::Session::PerClient);
  CHECK_FALSE(bank.required);

  const Server& crm = c.servers[1];
  CHECK(crm.transport == Server::Transport::Http);
  CHECK(crm.url == "https://crm.example/mcp");
  CHECK(crm.headers == Pairs{{"Authorization", "Bearer crm"}, {"X-A", "b"}});
  CHECK(crm.forward_headers == std::vector<std::string>{"X-Customer-Id"});
  REQUIRE(crm.filters.has_value());
  CHECK(crm.filters->exclude_tools == std::vector<std::string>{"crm__delete"});
  CHECK(crm.session == Server::Session::Shared);
  CHECK(crm.required);

  REQUIRE(c.plugins.size() == 2);
  CHECK(c.plugins[0].path == here("libbanking.so"));
  CHECK(c.plugins[0].config_json == R"({"limit":10,"name":"x"})");
  CHECK(c.plugins[1].config_json == "{}");
  CHECK(c.instructions == "Be nice.");
  CHECK(c.shutdown_grace_ms == 0);
}

TEST_CASE("config: the contract's example file is valid") {
  Config c = parse_ok(kContractExample, env_of({{"GATEWAY_TOKEN", "t"}, {"MCPGW_SAGA_SECRET", "s"}}));
  CHECK(c.auth.enabled);
  CHECK(c.modes.size() == 1);
  CHECK(c.sagas.secrets == std::vector<std::string>{"s"});
  REQUIRE(c.servers.size() == 1);
  CHECK(c.servers[0].cwd == std::filesystem::current_path().string());
  CHECK(c.servers[0].command == here("build/examples/bank-server"));
  CHECK(c.plugins[0].path == here("build/plugins/libbanking_composites.so"));
  CHECK(c.servers[0].filters.has_value());
  CHECK(c.plugins.size() == 1);
}

TEST_CASE("config: defaults when keys are absent") {
  Config c = parse_ok("servers: []\n");
  Config d;
  CHECK(c.listen.host == "127.0.0.1");
  CHECK(c.listen.port == 8080);
  CHECK(c.listen.path == "/mcp");
  CHECK(c.listen.max_body_bytes == d.listen.max_body_bytes);
  CHECK(c.listen.heartbeat_ms == d.listen.heartbeat_ms);
  CHECK(c.listen.page_size == d.listen.page_size);
  CHECK(c.listen.session_idle_s == d.listen.session_idle_s);
  CHECK_FALSE(c.auth.enabled);
  CHECK(c.naming.separator == ":");
  CHECK(c.naming.description_prefix == "[Proxied from {server}] ");
  CHECK(c.naming.max_length == 0);
  CHECK(c.modes.empty());
  CHECK(c.default_mode == "all");
  CHECK(c.chain.resolve);
  CHECK(c.chain.max_depth == 5);
  CHECK(c.chain.merge == Chain::Merge::All);
  CHECK(c.welcome.strategy == Welcome::Strategy::First);
  CHECK(c.welcome.arguments_json == "{}");
  CHECK(c.welcome.timeout_ms == 2000);
  CHECK(c.sagas.secrets.empty());
  CHECK(c.sagas.ttl_s == 900);
  CHECK(c.servers.empty());
  CHECK(c.plugins.empty());
  CHECK(c.instructions.empty());
  CHECK(c.shutdown_grace_ms == 10000);

  Config s = parse_ok("servers:\n  - name: a\n    command: run\n");
  REQUIRE(s.servers.size() == 1);
  const Server& a = s.servers[0];
  CHECK(a.transport == Server::Transport::Stdio);
  CHECK(a.args.empty());
  CHECK(a.command == "run");
  CHECK(a.cwd == std::filesystem::current_path().string());  // the file's directory
  CHECK(a.proxy_tools);
  CHECK(a.prefix);
  CHECK_FALSE(a.filters.has_value());
  CHECK(a.timeout_ms == 30000);
  CHECK(a.session == Server::Session::Shared);
  CHECK(a.required);

  // Empty sections read as their defaults; `auth: {}` means no auth.
  Config e = parse_ok("listen:\nauth: {}\nservers:\n");
  CHECK(e.listen.port == 8080);
  CHECK_FALSE(e.auth.enabled);
}

TEST_CASE("config: ${VAR} interpolation") {
  auto env = env_of({{"PORT", "9000"},
                     {"HOST", "localhost"},
                     {"ARG", "x"},
                     {"V", "v"},
                     {"EMPTY", ""},
                     {"N", "7"},
                     {"T", "true"}});

  SUBCASE("set, default, empty default and numeric conversion") {
    Config c = parse_ok(
        "listen:\n  host: ${HOST}\n  port: ${PORT}\n  page_size: \"${MISSING:-25}\"\n"
        "instructions: a${EMPTY:-b}c-${EMPTY}-${NOPE:-}-$$-$ x\n",
        env);
    CHECK(c.listen.host == "localhost");
    CHECK(c.listen.port == 9000);
    CHECK(c.listen.page_size == 25);
    CHECK(c.instructions == "abc---$$-$ x");
  }
  SUBCASE("in list items, map keys and values, booleans") {
    Config c = parse_ok(
        "servers:\n  - name: s\n    command: ${V}\n    args: [a, \"${ARG}\"]\n"
        "    env:\n      K_${V}: \"${ARG}-${ARG}\"\n    prefix: ${T}\n",
        env);
    CHECK(c.servers[0].command == "v");
    CHECK(c.servers[0].args == std::vector<std::string>{"a", "x"});
    CHECK(c.servers[0].env == std::vector<std::pair<std::string, std::string>>{{"K_v", "x-x"}});
    CHECK(c.servers[0].prefix);
  }
  SUBCASE("in JSON-valued keys: plain becomes a number, quoted stays a string") {
    Config c = parse_ok(
        "welcome:\n  arguments:\n    n: ${N}\n    s: \"${N}\"\n    nested:\n      - v: ${V}\n    b: ${T}\n"
        "plugins:\n  - path: p.so\n    config:\n      ${V}: ${EMPTY:-null}\n",
        env);
    CHECK(c.welcome.arguments_json == R"({"n":7,"s":"7","nested":[{"v":"v"}],"b":true})");
    CHECK(c.plugins[0].config_json == R"({"v":null})");
  }
  SUBCASE("unset without default is an error naming the variable") {
    CHECK(parse_error("servers: []\nsagas:\n  secret: ${MCPGW_SAGA_SECRET}\n", env) ==
          "gw.yaml:3: sagas.secret: environment variable MCPGW_SAGA_SECRET is not set");
    CHECK(parse_error("servers:\n  - name: a\n    command: x\n    args: [a, \"${NOPE}\"]\n", env) ==
          "gw.yaml:4: servers[0].args[1]: environment variable NOPE is not set");
    CHECK(parse_error("welcome:\n  arguments:\n    deep:\n      - 1\n      - k: ${NOPE}\n", env) ==
          "gw.yaml:5: welcome.arguments.deep[1].k: environment variable NOPE is not set");
  }
  SUBCASE("malformed references") {
    CHECK(parse_error("instructions: ${OPEN\n", env) ==
          "gw.yaml:1: instructions: unterminated \"${\" in \"${OPEN\"");
    CHECK(parse_error("instructions: a ${1X} b\n", env) ==
          "gw.yaml:1: instructions: invalid variable reference \"${1X}\"");
  }
  SUBCASE("an interpolated value that is not a number") {
    CHECK(parse_error("listen:\n  port: ${V}\n", env) ==
          "gw.yaml:2: listen.port: expected an integer, got \"v\"");
  }
}

TEST_CASE("config: sagas.secret as a string or a list") {
  CHECK(parse_ok("sagas:\n  secret: k1\n").sagas.secrets == std::vector<std::string>{"k1"});
  CHECK(parse_ok("sagas:\n  secret: \"\"\n").sagas.secrets.empty());
  CHECK(parse_ok("sagas:\n  secret: [a, b]\n").sagas.secrets == std::vector<std::string>{"a", "b"});
  CHECK(parse_ok("sagas:\n  secret: [\"${NEW}\", \"${OLD:-}\"]\n", env_of({{"NEW", "n"}})).sagas.secrets ==
        std::vector<std::string>{"n"});
  CHECK(parse_error("sagas:\n  secret: {a: b}\n") ==
        "gw.yaml:2: sagas.secret: expected a string or a list of strings, got a mapping");
}

TEST_CASE("config: cluster") {
  Cluster none = parse_ok("servers: []\n").cluster;
  CHECK(none.redis.empty());
  CHECK(none.secrets.empty());
  CHECK(none.session_ttl_s == 86400);
  Cluster c = parse_ok("cluster:\n  redis: redis://:pw@10.0.0.5:6380/2\n  secret: [\"${NEW}\", \"${OLD:-}\"]\n"
                       "  session_ttl_s: 600\n",
                       env_of({{"NEW", "n"}}))
                  .cluster;
  CHECK(c.redis == "redis://:pw@10.0.0.5:6380/2");
  CHECK(c.redis_host == "10.0.0.5");
  CHECK(c.redis_port == 6380);
  CHECK(c.redis_db == 2);
  CHECK(c.redis_password == "pw");
  CHECK(c.secrets == std::vector<std::string>{"n"});
  CHECK(c.session_ttl_s == 600);
  Cluster d = parse_ok("cluster:\n  redis: redis://cache\n  secret: s\n").cluster;
  CHECK(d.redis_host == "cache");
  CHECK(d.redis_port == 6379);
  CHECK(d.redis_db == 0);
  CHECK(d.secrets == std::vector<std::string>{"s"});
  Cluster v6 = parse_ok("cluster:\n  redis: redis://[::1]:7000/\n").cluster;
  CHECK(v6.redis_host == "::1");
  CHECK(v6.redis_port == 7000);
  CHECK(parse_ok("cluster:\n  redis: \"\"\n").cluster.redis.empty());
  CHECK(parse_error("cluster:\n  redis: http://x:1\n") ==
        "gw.yaml:2: cluster.redis: expected redis://[:password@]host[:port][/db] (the scheme must be redis://; TLS "
        "(rediss://) is not supported), got \"http://x:1\"");
  CHECK(parse_error("cluster:\n  redis: redis://x:0\n") ==
        "gw.yaml:2: cluster.redis: expected redis://[:password@]host[:port][/db] (the port must be from 1 to 65535), "
        "got \"redis://x:0\"");
  CHECK(parse_error("cluster:\n  redis: redis://x/abc\n") ==
        "gw.yaml:2: cluster.redis: expected redis://[:password@]host[:port][/db] (the database must be a number), "
        "got \"redis://x/abc\"");
  CHECK(parse_error("cluster:\n  redis: redis://:6379\n") ==
        "gw.yaml:2: cluster.redis: expected redis://[:password@]host[:port][/db] (the host is missing), got "
        "\"redis://:6379\"");
  CHECK(parse_error("cluster:\n  secret: {a: b}\n") ==
        "gw.yaml:2: cluster.secret: expected a string or a list of strings, got a mapping");
  CHECK(parse_error("cluster:\n  session_ttl_s: 5\n") ==
        "gw.yaml:2: cluster.session_ttl_s: expected an integer >= 60, got 5");
  CHECK(parse_error("cluster:\n  redi: x\n").find("gw.yaml:2: cluster.redi: unknown key") == 0);
  // The contract's own lines.
  Cluster contract = parse_ok("cluster:\n  redis: \"\"\n  secret: ${MCPGW_CLUSTER_SECRET}\n",
                              env_of({{"MCPGW_CLUSTER_SECRET", "k"}}))
                         .cluster;
  CHECK(contract.redis.empty());
  CHECK(contract.secrets == std::vector<std::string>{"k"});
}

TEST_CASE("config: wrong types and ranges") {
  CHECK(parse_error("listen:\n  port: abc\n") == "gw.yaml:2: listen.port: expected an integer, got \"abc\"");
  CHECK(parse_error("listen:\n  port: 70000\n") ==
        "gw.yaml:2: listen.port: expected an integer from 0 to 65535, got 70000");
  CHECK(parse_error("listen:\n  port: 99999999999999999999999\n") ==
        "gw.yaml:2: listen.port: expected an integer from 0 to 65535, got 99999999999999999999999");
  CHECK(parse_error("listen:\n  port: 1.5\n") == "gw.yaml:2: listen.port: expected an integer, got \"1.5\"");
  CHECK(parse_error("listen:\n  port: [1]\n") == "gw.yaml:2: listen.port: expected an integer, got a list");
  CHECK(parse_ok("listen:\n  port: 0\n").listen.port == 0);
  CHECK(parse_error("listen:\n  page_size: 0\n") ==
        "gw.yaml:2: listen.page_size: expected an integer >= 1, got 0");
  CHECK(parse_error("listen:\n  allowed_origins: x\n") ==
        "gw.yaml:2: listen.allowed_origins: expected a list, got \"x\"");
  CHECK(parse_error("listen:\n  allowed_hosts: [a, {b: c}]\n") ==
        "gw.yaml:2: listen.allowed_hosts[1]: expected a string, got a mapping");
  CHECK(parse_error("listen: 5\n") == "gw.yaml:1: listen: expected a mapping, got \"5\"");
  CHECK(parse_error("chain:\n  resolve: yes\n") ==
        "gw.yaml:2: chain.resolve: expected true or false, got \"yes\"");
  CHECK(parse_error("chain:\n  max_depth: 0\n") ==
        "gw.yaml:2: chain.max_depth: expected an integer >= 1, got 0");
  CHECK(parse_error("chain:\n  merge: first\n") ==
        "gw.yaml:2: chain.merge: expected all | last, got \"first\"");
  CHECK(parse_error("welcome:\n  timeout_ms: 0\n") ==
        "gw.yaml:2: welcome.timeout_ms: expected an integer >= 1, got 0");
  CHECK(parse_error("welcome:\n  strategy: random\n") ==
        "gw.yaml:2: welcome.strategy: expected first | priority | tool | none, got \"random\"");
  CHECK(parse_error("welcome:\n  arguments: [1]\n") ==
        "gw.yaml:2: welcome.arguments: expected a mapping, got a list");
  CHECK(parse_error("naming:\n  max_length: 8\n") ==
        "gw.yaml:2: naming.max_length: expected 0 (no limit) or an integer >= 16, got 8");
  CHECK(parse_ok("naming:\n  max_length: 16\n").naming.max_length == 16);
  CHECK(parse_error("naming:\n  separator: \"\"\n") == "gw.yaml:2: naming.separator: must not be empty");
  CHECK(parse_error("servers: {a: 1}\n") == "gw.yaml:1: servers: expected a list, got a mapping");
  CHECK(parse_error("modes: [a]\n") == "gw.yaml:1: modes: expected a mapping, got a list");
}

TEST_CASE("config: server validation") {
  CHECK(parse_error("servers:\n  - transport: stdio\n    command: x\n") ==
        "gw.yaml:2: servers[0].name: required key is missing");
  CHECK(parse_error("servers:\n  - name: \"a b\"\n    command: x\n") ==
        "gw.yaml:2: servers[0].name: expected a server name of [A-Za-z0-9_-]+, got \"a b\"");
  CHECK(parse_error("naming:\n  separator: _\nservers:\n  - name: my_bank\n    command: x\n") ==
        "gw.yaml:4: servers[0].name: server name \"my_bank\" contains the naming separator \"_\"");
  CHECK(parse_error("servers:\n  - name: a\n") == "gw.yaml:2: servers[0].command: required key is missing");
  CHECK(parse_error("servers:\n  - name: a\n    transport: ftp\n") ==
        "gw.yaml:3: servers[0].transport: expected stdio | http, got \"ftp\"");
  CHECK(parse_error("servers:\n  - name: a\n    transport: http\n") ==
        "gw.yaml:2: servers[0].url: required key is missing");
  CHECK(parse_error("servers:\n  - name: a\n    transport: http\n    url: ftp://x\n") ==
        "gw.yaml:4: servers[0].url: expected an http:// or https:// URL, got \"ftp://x\"");
  CHECK(parse_ok("servers:\n  - name: a\n    transport: http\n    url: http://127.0.0.1:9/mcp\n")
            .servers[0]
            .url == "http://127.0.0.1:9/mcp");
  CHECK(parse_error("servers:\n  - name: a\n    command: x\n    session: private\n") ==
        "gw.yaml:4: servers[0].session: expected shared | per_client, got \"private\"");
  CHECK(parse_error(
            "servers:\n  - name: a\n    command: x\n  - name: b\n    command: y\n    timeout_ms: -1\n") ==
        "gw.yaml:6: servers[1].timeout_ms: expected an integer >= 1, got -1");
  CHECK(parse_error("servers:\n  - name: a\n    command: x\n    slices:\n      read: get_*\n") ==
        "gw.yaml:5: servers[0].slices.read: expected a list, got \"get_*\"");
  CHECK(parse_error("servers:\n  - name: a\n    command: x\n    env: [A]\n") ==
        "gw.yaml:4: servers[0].env: expected a mapping, got a list");
  CHECK(parse_error("servers:\n  - name: a\n    command: x\n    filters:\n      include: [a]\n") ==
        "gw.yaml:5: servers[0].filters.include: unknown key \"include\" (did you mean \"include_slices\"?)");
}

TEST_CASE("config: an empty list item is reported at its list") {
  CHECK(parse_error("servers:\n  -\n  - name: a\n") == "gw.yaml:2: servers[0].name: required key is missing");
}

TEST_CASE("config: duplicate server names name both lines") {
  CHECK(parse_error("servers:\n  - name: x\n    command: a\n\n\n\n  - name: bank\n    command: a\n"
                    "  - name: bank\n    command: b\n") ==
        "gw.yaml:9: servers[2].name: duplicate server name \"bank\" (first defined at line 7)");
}

TEST_CASE("config: duplicate keys are errors") {
  CHECK(parse_error("listen:\n  port: 1\n  port: 2\n") ==
        "gw.yaml:3: listen.port: duplicate key \"port\" (first defined at line 2)");
  CHECK(parse_error("servers:\n  - name: a\n    command: x\n    env:\n      A: 1\n      A: 2\n") ==
        "gw.yaml:6: servers[0].env.A: duplicate key \"A\" (first defined at line 5)");
}

TEST_CASE("config: unknown keys, with a suggestion when close") {
  CHECK(parse_error("servers:\n  - name: a\n    command: x\n    timeout: 5\n") ==
        "gw.yaml:4: servers[0].timeout: unknown key \"timeout\" (did you mean \"timeout_ms\"?)");
  CHECK(parse_error("listen:\n  prot: 1\n") ==
        "gw.yaml:2: listen.prot: unknown key \"prot\" (did you mean \"port\"?)");
  CHECK(parse_error("servers: []\nbanana: 1\n") == "gw.yaml:2: banana: unknown key \"banana\"");
  CHECK(
      parse_error("modes:\n  ro:\n    include_slice: [a]\n") ==
      "gw.yaml:3: modes.ro.include_slice: unknown key \"include_slice\" (did you mean \"include_slices\"?)");
  CHECK(parse_error("auth:\n  bearer_tokens:\n    - token: t\n      name: n\n      mode: [all]\n") ==
        "gw.yaml:5: auth.bearer_tokens[0].mode: unknown key \"mode\" (did you mean \"modes\"?)");
}

TEST_CASE("config: modes and default_mode") {
  CHECK(parse_error("modes:\n  ro:\n    include_slices: [read, 3, {a: b}]\n") ==
        "gw.yaml:3: modes.ro.include_slices[2]: expected a string, got a mapping");
  CHECK(parse_error("modes:\n  ro: {}\n  all: {}\n") ==
        "gw.yaml:3: modes.all: a mode may not be named \"all\" (it means every tool)");
  CHECK(parse_error("modes:\n  \"r o\": {}\n") ==
        "gw.yaml:2: modes.r o: expected a mode name of [A-Za-z0-9_-]+, got \"r o\"");
  CHECK(parse_error("modes:\n  ro: {}\ndefault_mode: rw\n") ==
        "gw.yaml:3: default_mode: expected \"all\" or a key of modes, got \"rw\"");
  // Order in the file does not matter.
  CHECK(parse_ok("default_mode: ro\nmodes:\n  ro: {}\n").default_mode == "ro");
  CHECK(parse_error("auth:\n  bearer_tokens:\n    - token: t\n      name: n\n      modes: [all, rw]\n") ==
        "gw.yaml:5: auth.bearer_tokens[0].modes[1]: unknown mode \"rw\"");
}

TEST_CASE("config: auth") {
  CHECK(parse_error("auth:\n  bearer_tokens:\n    - name: ci\n") ==
        "gw.yaml:3: auth.bearer_tokens[0].token: required key is missing");
  CHECK(parse_error("auth:\n  bearer_tokens:\n    - token: \"${T:-}\"\n      name: ci\n") ==
        "gw.yaml:3: auth.bearer_tokens[0].token: must not be empty");
  CHECK(parse_error("auth:\n  bearer_tokens:\n    - token: t\n") ==
        "gw.yaml:3: auth.bearer_tokens[0].name: required key is missing");
  CHECK(parse_error("auth:\n  bearer_tokens: []\n") ==
        "gw.yaml:2: auth.bearer_tokens: expected at least one token (remove \"auth\" to turn authentication "
        "off)");
  CHECK(parse_error("auth:\n  bearer_tokens:\n    - {token: t, name: a}\n    - {token: t, name: b}\n") ==
        "gw.yaml:4: auth.bearer_tokens[1].token: the same token as auth.bearer_tokens[0]");
}

TEST_CASE("config: a non-loopback listener requires auth") {
  CHECK(parse_error("listen:\n  host: 0.0.0.0\n") ==
        "gw.yaml:2: listen.host: serving a non-loopback address requires auth");
  CHECK(parse_error("auth: {}\nlisten:\n  host: 10.0.0.1\n") ==
        "gw.yaml:3: listen.host: serving a non-loopback address requires auth");
  for (const char* host : {"127.0.0.1", "127.1.2.3", "localhost", "::1", "\"::1\""}) {
    CHECK(parse_ok(std::string("listen:\n  host: ") + host + "\n").listen.host != "");
  }
  CHECK_FALSE(parse("listen:\n  host: 127.0.0.1.evil\n", "gw.yaml", env_of({})).ok());
  CHECK(parse_ok("listen:\n  host: 0.0.0.0\nauth:\n  bearer_tokens: [{token: t, name: n}]\n").auth.enabled);
}

TEST_CASE("config: listen.path") {
  CHECK(parse_ok("listen:\n  path: /a/b\n").listen.path == "/a/b");
  for (const char* bad : {"/", "mcp", "/mcp/", "\"\""}) {
    CHECK(parse_error(std::string("listen:\n  path: ") + bad + "\n")
              .rfind("gw.yaml:2: listen.path: expected a path", 0) == 0);
  }
}

TEST_CASE("config: welcome strategy tool needs a tool") {
  CHECK(parse_error("welcome:\n  strategy: tool\n") == "gw.yaml:2: welcome.tool: required key is missing");
  CHECK(parse_error("welcome:\n  strategy: tool\n  tool: \"\"\n") ==
        "gw.yaml:3: welcome.tool: must name the welcome tool with strategy: tool");
}

TEST_CASE("config: JSON conversion of YAML scalars") {
  Config c = parse_ok(
      "plugins:\n  - path: p.so\n    config:\n      i: -12\n      f: 2.5e3\n      big: 123456789012\n"
      "      s: 'true'\n      t: !!str 5\n      b: false\n      n: ~\n      e: \"\"\n      text: "
      "\"a\\\"b\\n\"\n"
      "      ver: 1.2.3\n      inf: .inf\n      block: |\n        x\n");
  CHECK(c.plugins[0].config_json ==
        R"({"i":-12,"f":2500.0,"big":123456789012,"s":"true","t":"5","b":false,"n":null,"e":"",)"
        R"("text":"a\"b\n","ver":"1.2.3","inf":".inf","block":"x\n"})");
  CHECK(parse_ok("plugins:\n  - path: p.so\n    config: {a: [1, x]}\n").plugins[0].config_json == R"({"a":[1,"x"]})");
  CHECK(parse_error("plugins:\n  - path: p.so\n    config: [1, x]\n") ==
        "gw.yaml:3: plugins[0].config: expected a mapping (handed to the plugin as a JSON object), got a list");
  CHECK(parse_error("plugins:\n  - config: {}\n") == "gw.yaml:2: plugins[0].path: required key is missing");
}

TEST_CASE("config: invalid YAML and bad documents") {
  std::string e = parse_error("listen:\n  port: 1\n  allowed_origins: [a,\nservers: []\n");
  CHECK(e.rfind("gw.yaml:", 0) == 0);
  CHECK(e.find(": invalid YAML: ") != std::string::npos);
  CHECK(parse_error("a: 1\n  b: 2\n").rfind("gw.yaml:2: invalid YAML: ", 0) == 0);
  CHECK(parse_error("") == "gw.yaml:1: the file is empty (expected a mapping of settings)");
  CHECK(parse_error("# only a comment\n") == "gw.yaml:1: the file is empty (expected a mapping of settings)");
  CHECK(parse_error("- a\n- b\n") ==
        "gw.yaml:1: expected a mapping of settings at the top level, got a list");
  CHECK(parse_error("servers: []\n---\nservers: []\n") ==
        "gw.yaml:3: invalid YAML: expected one document, found 2");
  CHECK(parse_error("servers: []\n...\n# c\nlisten: {}\n") ==
        "gw.yaml:4: invalid YAML: expected one document, found 2");
  CHECK(parse_ok("%YAML 1.2\n---\nservers: []\n...\n# the end\n").servers.empty());
  // yaml-cpp quotes the bad escape as is (found by fuzz_config).
  CHECK(parse_error("a: \"\\\x01\"\n") == "gw.yaml:1: invalid YAML: unknown escape character: \\x01");
  // yaml-cpp 0.7's LoadAll never returned on this text (found by fuzz_config).
  CHECK(parse_error(",;\n -ab\n") ==
        "gw.yaml:1: expected a mapping of settings at the top level, got text that is not YAML");
}

TEST_CASE("config: load reads the file or says why it cannot") {
  auto missing = load("/nonexistent/dir/gw.yaml", env_of({}));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error() == "/nonexistent/dir/gw.yaml: cannot read: No such file or directory");

  std::string path = "/tmp/mcpgw_config_test_" + std::to_string(::getpid()) + ".yaml";
  {
    std::ofstream out(path);
    out << "listen:\n  port: ${P}\n  path: /x\n  bogus: 1\n";
  }
  auto bad = load(path, env_of({{"P", "1"}}));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error() == path + ":4: listen.bogus: unknown key \"bogus\"");
  {
    std::ofstream out(path);
    out << "listen:\n  port: ${P}\n";
  }
  auto good = load(path, env_of({{"P", "1234"}}));
  REQUIRE(good.ok());
  CHECK(good->listen.port == 1234);
  CHECK(good->source == path);
  std::remove(path.c_str());
}

TEST_CASE("config: process_env reads the environment") {
  CHECK(process_env("PATH").has_value());
  CHECK_FALSE(process_env("MCPGW_SURELY_UNSET_VARIABLE_4711").has_value());
}

TEST_CASE("config: resolve_path makes a path absolute against a directory, lexically") {
  CHECK(resolve_path("/etc/mcpgw", "bin/srv") == "/etc/mcpgw/bin/srv");
  CHECK(resolve_path("/etc/mcpgw", "./bin/../lib//x.so") == "/etc/mcpgw/lib/x.so");
  CHECK(resolve_path("/etc/mcpgw", "../shared") == "/etc/shared");
  CHECK(resolve_path("/etc/mcpgw", ".") == "/etc/mcpgw");
  CHECK(resolve_path("/etc/mcpgw", "data/") == "/etc/mcpgw/data");
  CHECK(resolve_path("/etc/mcpgw", "/opt/x/./y") == "/opt/x/y");
  CHECK(resolve_path("/etc/mcpgw", "") == "");
  CHECK(resolve_command("/etc/mcpgw", "npx") == "npx");
  CHECK(resolve_command("/etc/mcpgw", "./npx") == "/etc/mcpgw/npx");
  CHECK(base_dir_of("/etc/mcpgw/gw.yaml") == "/etc/mcpgw");
  CHECK(base_dir_of("/etc/mcpgw/../mcpgw/./gw.yaml") == "/etc/mcpgw");
  CHECK(base_dir_of("conf/gw.yaml") == here("conf"));
  CHECK(base_dir_of("gw.yaml") == std::filesystem::current_path().string());
}

TEST_CASE("config: paths in the file are relative to the file's directory, after interpolation") {
  auto parse_at = [](const std::string& source, const std::string& yaml, const EnvLookup& env = env_of({})) {
    auto r = parse(yaml, source, env);
    INFO(yaml);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error()));
    return std::move(r.value());
  };
  const char* yaml =
      "servers:\n"
      "  - {name: rel, command: ./bin/server}\n"
      "  - {name: up, command: ../tools/srv, cwd: data}\n"
      "  - {name: abs, command: /usr/bin/srv, cwd: /var/lib/x}\n"
      "  - {name: path, command: npx, args: [-y, ./not-a-path-mcpgw-knows]}\n"
      "  - {name: dot, command: bin/srv, cwd: .}\n"
      "  - {name: web, transport: http, url: http://127.0.0.1:1/mcp}\n"
      "plugins:\n"
      "  - path: ./build/plugins/libx.so\n"
      "  - path: libsearched.so\n"
      "  - path: /opt/lib/liby.so\n";
  Config c = parse_at("/etc/mcpgw/gateway.yaml", yaml);
  REQUIRE(c.servers.size() == 6);
  CHECK(c.servers[0].command == "/etc/mcpgw/bin/server");
  CHECK(c.servers[0].cwd == "/etc/mcpgw");  // no cwd: the file's directory
  // A command is relative to the file, not to the server's cwd.
  CHECK(c.servers[1].command == "/etc/tools/srv");
  CHECK(c.servers[1].cwd == "/etc/mcpgw/data");
  CHECK(c.servers[2].command == "/usr/bin/srv");
  CHECK(c.servers[2].cwd == "/var/lib/x");
  CHECK(c.servers[3].command == "npx");  // PATH lookup
  CHECK(c.servers[3].args == std::vector<std::string>{"-y", "./not-a-path-mcpgw-knows"});
  CHECK(c.servers[4].command == "/etc/mcpgw/bin/srv");
  CHECK(c.servers[4].cwd == "/etc/mcpgw");
  CHECK(c.servers[5].cwd.empty());
  REQUIRE(c.plugins.size() == 3);
  CHECK(c.plugins[0].path == "/etc/mcpgw/build/plugins/libx.so");
  CHECK(c.plugins[1].path == "libsearched.so");  // ld.so search
  CHECK(c.plugins[2].path == "/opt/lib/liby.so");
  CHECK(c.source == "/etc/mcpgw/gateway.yaml");

  // ${VAR} first, then the path is resolved.
  const char* interpolated = "servers:\n  - {name: s, command: \"${BIN:-./bin}/srv\", cwd: \"${DIR:-}\"}\n";
  CHECK(parse_at("/srv/gw.yaml", interpolated).servers[0].command == "/srv/bin/srv");
  CHECK(parse_at("/srv/gw.yaml", interpolated).servers[0].cwd == "/srv");
  Config abs = parse_at("/srv/gw.yaml", interpolated, env_of({{"BIN", "/opt"}, {"DIR", "/tmp"}}));
  CHECK(abs.servers[0].command == "/opt/srv");
  CHECK(abs.servers[0].cwd == "/tmp");
  Config rel = parse_at("/srv/gw.yaml", interpolated, env_of({{"BIN", "tools"}, {"DIR", "work"}}));
  CHECK(rel.servers[0].command == "/srv/tools/srv");
  CHECK(rel.servers[0].cwd == "/srv/work");

  // A relative file name: its directory is taken from the current one.
  CHECK(parse_at("conf/gw.yaml", yaml).servers[0].command == here("conf/bin/server"));
}

TEST_CASE("config: load resolves against the directory of the file it reads") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("mcpgw_config_paths_" + std::to_string(::getpid()));
  fs::create_directories(dir / "sub");
  fs::path file = dir / "sub" / "gw.yaml";
  {
    std::ofstream out(file);
    out << "servers:\n  - name: s\n    command: ../bin/srv\nplugins:\n  - path: ./p.so\n";
  }
  auto c = load(file.string(), env_of({}));
  REQUIRE(c.ok());
  CHECK(c->servers[0].command == (dir / "bin" / "srv").string());
  CHECK(c->servers[0].cwd == (dir / "sub").string());
  CHECK(c->plugins[0].path == (dir / "sub" / "p.so").string());
  fs::remove_all(dir);
}

TEST_CASE("config: audit") {
  Config none = parse_ok("servers: []\n");
  CHECK(none.audit.path.empty());
  CHECK(none.audit.arguments == Audit::Arguments::Digest);
  CHECK(parse_ok("audit:\n  path: \"-\"\n").audit.path == "-");
  Config file = parse_ok("audit:\n  path: logs/audit.jsonl\n  arguments: full\n");
  CHECK(file.audit.path == here("logs/audit.jsonl"));
  CHECK(file.audit.arguments == Audit::Arguments::Full);
  CHECK(parse_ok("audit:\n  arguments: none\n").audit.arguments == Audit::Arguments::None);
  CHECK(parse_error("audit:\n  arguments: hash\n") ==
        "gw.yaml:2: audit.arguments: expected digest | full | none, got \"hash\"");
  CHECK(parse_error("audit:\n  file: x\n").find("gw.yaml:2: audit.file: unknown key \"file\"") == 0);
}

TEST_CASE("config: servers[].protocol, max_concurrency and circuit") {
  const std::string head = "servers:\n  - name: s\n    command: /bin/true\n";
  Config d = parse_ok(head);
  CHECK(d.servers[0].protocol == Server::Protocol::Auto);
  CHECK(d.servers[0].max_concurrency == 0);
  CHECK(d.servers[0].circuit.failures == 5);
  CHECK(d.servers[0].circuit.open_ms == 10000);
  CHECK(parse_ok(head + "    protocol: 2025-11-25\n").servers[0].protocol == Server::Protocol::Stateful);
  CHECK(parse_ok(head + "    protocol: 2026-07-28\n").servers[0].protocol == Server::Protocol::Stateless);
  CHECK(parse_ok(head + "    protocol: auto\n").servers[0].protocol == Server::Protocol::Auto);
  CHECK(parse_error(head + "    protocol: 2025-06-18\n") ==
        "gw.yaml:4: servers[0].protocol: expected auto | 2025-11-25 | 2026-07-28, got \"2025-06-18\"");
  CHECK(parse_ok(head + "    max_concurrency: 2\n").servers[0].max_concurrency == 2);
  CHECK(parse_error(head + "    max_concurrency: -1\n") ==
        "gw.yaml:4: servers[0].max_concurrency: expected an integer >= 0, got -1");
  Config c = parse_ok(head + "    circuit: { failures: 3, open_ms: 500 }\n");
  CHECK(c.servers[0].circuit == Circuit{3, 500});
  CHECK(parse_ok(head + "    circuit: { failures: 0 }\n").servers[0].circuit.failures == 0);
  CHECK(parse_error(head + "    circuit: { open_ms: 0 }\n") ==
        "gw.yaml:4: servers[0].circuit.open_ms: expected an integer >= 1, got 0");
  CHECK(parse_error(head + "    circuit: { failure: 3 }\n").find("servers[0].circuit.failure: unknown key") != std::string::npos);
}

TEST_CASE("config: discovery at the top level and per mode") {
  Config c = parse_ok("modes:\n  a: {include_slices: [read]}\n  b: {discovery: search}\n  c: {discovery: all}\n");
  CHECK(c.discovery == Discovery::All);
  REQUIRE(c.modes.size() == 3);
  CHECK_FALSE(c.modes[0].discovery.has_value());
  CHECK(c.modes[1].discovery == Discovery::Search);
  CHECK(c.modes[2].discovery == Discovery::All);

  Config s = parse_ok("discovery: search\nmodes:\n  a: {discovery: all}\n");
  CHECK(s.discovery == Discovery::Search);
  CHECK(s.modes[0].discovery == Discovery::All);

  CHECK(parse_error("discovery: bm25\n") == "gw.yaml:1: discovery: expected all | search, got \"bm25\"");
  CHECK(parse_error("modes:\n  a:\n    discovery: [search]\n").rfind("gw.yaml:3: modes.a.discovery:", 0) == 0);
  CHECK(parse_error("modes:\n  a:\n    discover: search\n").rfind("gw.yaml:3: modes.a.discover: unknown key", 0) == 0);
}

TEST_CASE("config: auth.oauth, limits and admin") {
  Config c = parse_ok(R"(auth:
  oauth:
    issuer: https://idp.example.com/
    audience: https://gw.example.com/mcp
    jwks_url: https://idp.example.com/jwks
    required_scopes: [mcp]
    scope_modes: {"mcp:read": [readonly], "mcp:all": [all]}
    principal_claim: client_id
    leeway_s: 30
limits: {calls_per_s: 5, burst: 10, max_in_flight_per_session: 4, max_sessions: 100, max_batch_size: 0,
         batch_concurrency: 2, max_client_requests_per_call: 3, max_client_requests_per_session: 5}
admin: {host: 127.0.0.1, port: 9191}
modes: {readonly: {include_slices: [read]}}
servers:
  - {name: crm, transport: http, url: "http://127.0.0.1:1/mcp", forward_headers: [X-Customer-Id]}
)");
  CHECK(c.auth.enabled);
  CHECK(c.auth.bearer_tokens.empty());
  REQUIRE(c.auth.oauth.has_value());
  const OAuth& o = *c.auth.oauth;
  CHECK(o.issuer == "https://idp.example.com/");
  CHECK(o.audience == "https://gw.example.com/mcp");
  CHECK(o.jwks_url == "https://idp.example.com/jwks");
  CHECK(o.jwks_file.empty());
  CHECK(o.authorization_servers == std::vector<std::string>{"https://idp.example.com/"});  // defaults to the issuer
  CHECK(o.required_scopes == std::vector<std::string>{"mcp"});
  REQUIRE(o.scope_modes.size() == 2);
  CHECK(o.scope_modes[0].first == "mcp:read");
  CHECK(o.scope_modes[0].second == std::vector<std::string>{"readonly"});
  CHECK(o.principal_claim == "client_id");
  CHECK(o.leeway_s == 30);
  CHECK(c.limits == Limits{5, 10, 4, 100, 0, 2, 3, 5});
  REQUIRE(c.admin.has_value());
  CHECK(c.admin->port == 9191);
  CHECK(c.servers[0].forward_headers == std::vector<std::string>{"X-Customer-Id"});
}

TEST_CASE("config: access defaults") {
  Config c = parse_ok("servers: []\n");
  CHECK_FALSE(c.auth.oauth.has_value());
  CHECK(c.limits == Limits{0, 0, 0, 10000, 100, 8, 64, 256});
  CHECK_FALSE(c.admin.has_value());
  Config f = parse_ok("auth: {oauth: {issuer: i, audience: \"https://gw/mcp\", jwks_file: keys.json}}\n");
  CHECK(f.auth.oauth->jwks_file == here("keys.json"));
  CHECK(f.auth.oauth->principal_claim == "sub");
  CHECK(f.auth.oauth->leeway_s == 60);
}

TEST_CASE("config: bad access settings name the key") {
  const std::string head = "auth:\n  oauth:\n    issuer: https://idp/\n    audience: https://gw/mcp\n";
  CHECK(parse_error(head) == "gw.yaml:3: auth.oauth: jwks_url or jwks_file is required");
  CHECK(parse_error(head + "    jwks_url: http://idp.example.com/jwks\n") ==
        "gw.yaml:5: auth.oauth.jwks_url: plain http is allowed only for a loopback host; use https, got "
        "\"http://idp.example.com/jwks\"");
  CHECK(parse_ok(head + "    jwks_url: http://127.0.0.1:8081/jwks\n").auth.oauth->jwks_url == "http://127.0.0.1:8081/jwks");
  CHECK(parse_error(head + "    jwks_url: https://idp/jwks\n    jwks_file: k.json\n") ==
        "gw.yaml:6: auth.oauth.jwks_file: give jwks_url or jwks_file, not both");
  CHECK(parse_error(head + "    jwks_url: https://idp/jwks\n    scope_modes: {x: [nope]}\n") ==
        "gw.yaml:6: auth.oauth.scope_modes.x[0]: unknown mode \"nope\"");
  CHECK(parse_error(head + "    jwks_url: https://idp/jwks\n    jwks_uri: x\n") ==
        "gw.yaml:6: auth.oauth.jwks_uri: unknown key \"jwks_uri\" (did you mean \"jwks_url\"?)");
  CHECK(parse_error("auth: {oauth: {audience: \"https://gw/mcp\", jwks_file: k}}\n") ==
        "gw.yaml:1: auth.oauth.issuer: required key is missing");
  CHECK(parse_error("limits: {calls_per_s: -1}\n") == "gw.yaml:1: limits.calls_per_s: expected an integer >= 0, got -1");
  CHECK(parse_error("limits: {burst: 3}\n") == "gw.yaml:1: limits.burst: burst needs calls_per_s");
  CHECK(parse_error("limits: {max_session: 3}\n") ==
        "gw.yaml:1: limits.max_session: unknown key \"max_session\" (did you mean \"max_sessions\"?)");
  CHECK(parse_error("limits: {max_batch_size: -1}\n") == "gw.yaml:1: limits.max_batch_size: expected an integer >= 0, got -1");
  CHECK(parse_error("limits: {batch_concurrency: 0}\n") ==
        "gw.yaml:1: limits.batch_concurrency: expected an integer from 1 to 1024, got 0");
  CHECK(parse_error("limits: {max_client_requests_per_call: 0}\n") ==
        "gw.yaml:1: limits.max_client_requests_per_call: expected an integer from 1 to 65536, got 0");
  CHECK(parse_error("limits:\n  max_client_requests_per_session: x\n").rfind(
            "gw.yaml:2: limits.max_client_requests_per_session: expected an integer", 0) == 0);
  CHECK(parse_error("limits: {max_batch: 3}\n") ==
        "gw.yaml:1: limits.max_batch: unknown key \"max_batch\" (did you mean \"max_batch_size\"?)");
  CHECK(parse_error("admin: {port: 70000}\n") == "gw.yaml:1: admin.port: expected an integer from 0 to 65535, got 70000");
  CHECK(parse_error("servers:\n  - {name: a, transport: http, url: \"http://127.0.0.1:1/mcp\", forward_headers: [Authorization]}\n") ==
        "gw.yaml:2: servers[0].forward_headers: cannot forward \"Authorization\" (the client's credentials stay at the "
        "gateway; give upstream credentials in headers)");
}

TEST_CASE("config: tasks") {
  Tasks none = parse_ok("servers: []\n").tasks;
  CHECK_FALSE(none.gateway);
  CHECK(none.max_per_principal == 1000);
  CHECK(none.max_result_bytes == 16777216);
  // The contract's own lines.
  Tasks t = parse_ok("tasks:\n  gateway: true\n  max_per_principal: 5\n  max_result_bytes: 2048\n").tasks;
  CHECK(t.gateway);
  CHECK(t.max_per_principal == 5);
  CHECK(t.max_result_bytes == 2048);
  CHECK(parse_error("tasks:\n  gateway: maybe\n") == "gw.yaml:2: tasks.gateway: expected true or false, got \"maybe\"");
  CHECK(parse_error("tasks:\n  max_per_principal: 0\n") ==
        "gw.yaml:2: tasks.max_per_principal: expected an integer >= 1, got 0");
  CHECK(parse_error("tasks:\n  max_result_bytes: -1\n") ==
        "gw.yaml:2: tasks.max_result_bytes: expected an integer >= 1, got -1");
  CHECK(parse_error("tasks:\n  gateways: true\n").find("gw.yaml:2: tasks.gateways: unknown key") == 0);
  CHECK(parse_error("tasks: [1]\n").find("gw.yaml:1: tasks: expected a mapping") == 0);
}

TEST_CASE("config: telemetry.otlp") {
  Config off = parse_ok("servers: []\n");
  CHECK(off.telemetry.otlp.endpoint.empty());
  CHECK(off.telemetry.otlp.sample_ratio == 1.0);
  CHECK(off.telemetry.otlp.service_name == "mcpgw");
  CHECK(off.telemetry.otlp.headers.empty());

  Config on = parse_ok(
      "telemetry:\n  otlp:\n    endpoint: ${OTLP:-http://127.0.0.1:4318}\n    headers: {Authorization: \"Bearer x\"}\n"
      "    sample_ratio: 0.25\n    service_name: gw-eu\n");
  CHECK(on.telemetry.otlp.endpoint == "http://127.0.0.1:4318");
  REQUIRE(on.telemetry.otlp.headers.size() == 1);
  CHECK(on.telemetry.otlp.headers[0] == std::pair<std::string, std::string>{"Authorization", "Bearer x"});
  CHECK(on.telemetry.otlp.sample_ratio == 0.25);
  CHECK(on.telemetry.otlp.service_name == "gw-eu");
  CHECK(parse_ok("telemetry: {otlp: {endpoint: \"\"}}\n").telemetry.otlp.endpoint.empty());
  CHECK(parse_ok("telemetry: {otlp: {sample_ratio: 0}}\n").telemetry.otlp.sample_ratio == 0.0);
  CHECK(parse_ok("telemetry:\n").telemetry.otlp.endpoint.empty());

  CHECK(parse_error("telemetry: {otlp: {endpoint: \"grpc://c:4317\"}}\n") ==
        "gw.yaml:1: telemetry.otlp.endpoint: expected an http:// or https:// URL (the collector's OTLP/HTTP base, e.g. "
        "http://collector:4318), got \"grpc://c:4317\"");
  CHECK(parse_error("telemetry: {otlp: {endpoint: \"http://\"}}\n").find("expected an http:// or https:// URL") !=
        std::string::npos);
  CHECK(parse_error("telemetry: {otlp: {sample_ratio: 1.5}}\n") ==
        "gw.yaml:1: telemetry.otlp.sample_ratio: expected a number from 0 to 1, got 1.5");
  CHECK(parse_error("telemetry: {otlp: {sample_ratio: half}}\n") ==
        "gw.yaml:1: telemetry.otlp.sample_ratio: expected a number, got \"half\"");
  CHECK(parse_error("telemetry: {otlp: {service_name: \"\"}}\n") ==
        "gw.yaml:1: telemetry.otlp.service_name: must not be empty");
  CHECK(parse_error("telemetry: {otlp: {endpont: x}}\n") ==
        "gw.yaml:1: telemetry.otlp.endpont: unknown key \"endpont\" (did you mean \"endpoint\"?)");
  CHECK(parse_error("telemetry: {jaeger: {}}\n") == "gw.yaml:1: telemetry.jaeger: unknown key \"jaeger\"");
}

TEST_CASE("config: servers[].oauth and upstream_oauth") {
  const std::string crm = "servers:\n  - name: crm\n    transport: http\n    url: https://crm.example.com/mcp\n    oauth:\n";
  Config none = parse_ok("servers: []\n");
  CHECK(none.upstream_oauth == UpstreamOAuth{});
  CHECK(parse_ok("servers:\n  - {name: a, transport: http, url: \"http://127.0.0.1:1/mcp\"}\n").servers[0].oauth == std::nullopt);

  Config cc = parse_ok(crm + "      grant: client_credentials\n      client_id: mcpgw\n      client_secret: ${S}\n"
                             "      scopes: [crm.read, crm.write]\n      issuer: https://idp.example.com\n"
                             "      token_endpoint: https://idp.example.com/token\n",
                       env_of({{"S", "shh"}}));
  REQUIRE(cc.servers[0].oauth.has_value());
  const ServerOAuth& o = *cc.servers[0].oauth;
  CHECK(o.grant == ServerOAuth::Grant::ClientCredentials);
  CHECK(o.client_id == "mcpgw");
  CHECK(o.client_secret == "shh");
  CHECK(o.private_key_file.empty());
  CHECK(o.scopes == std::vector<std::string>{"crm.read", "crm.write"});
  CHECK(o.issuer == "https://idp.example.com");
  CHECK(o.token_endpoint == "https://idp.example.com/token");
  CHECK(o.authorization_endpoint.empty());

  auto jwt = parse_ok(crm + "      grant: client_credentials\n      client_id: mcpgw\n      private_key_file: keys/gw.pem\n");
  CHECK(jwt.servers[0].oauth->private_key_file == here("keys/gw.pem"));
  CHECK(jwt.servers[0].oauth->issuer.empty());  // discovered

  // authorization_code: a pre-registered client, a CIMD, or neither (dynamic registration).
  auto code = parse_ok(crm + "      grant: authorization_code\n      client_id: gw\n"
                             "      authorization_endpoint: https://idp/authorize\n");
  CHECK(code.servers[0].oauth->grant == ServerOAuth::Grant::AuthorizationCode);
  CHECK(code.servers[0].oauth->authorization_endpoint == "https://idp/authorize");
  auto cimd = parse_ok(crm + "      grant: authorization_code\n      client_id_metadata_url: https://gw.example.com/oauth/client.json\n");
  CHECK(cimd.servers[0].oauth->client_id.empty());
  CHECK(cimd.servers[0].oauth->client_id_metadata_url == "https://gw.example.com/oauth/client.json");
  CHECK(parse_ok(crm + "      grant: authorization_code\n").servers[0].oauth->client_id.empty());

  const std::string with_auth = "auth:\n  oauth: {issuer: \"https://idp/\", audience: \"https://gw/mcp\", jwks_file: k.json}\n";
  auto tx = parse_ok(with_auth + crm + "      grant: token_exchange\n      client_id: gw\n      client_secret: s\n");
  CHECK(tx.servers[0].oauth->grant == ServerOAuth::Grant::TokenExchange);

  Config u = parse_ok("upstream_oauth:\n  redirect_url: https://gw.example.com/oauth/callback\n  store: tokens.bin\n"
                      "  key: ${K}\n",
                      env_of({{"K", "k1"}}));
  CHECK(u.upstream_oauth.redirect_url == "https://gw.example.com/oauth/callback");
  CHECK(u.upstream_oauth.store == here("tokens.bin"));
  CHECK(u.upstream_oauth.key == "k1");
  // The key defaults to cluster.secret.
  CHECK(parse_ok("cluster: {secret: cs}\nupstream_oauth: {store: t.bin}\n" + crm + "      grant: authorization_code\n")
            .upstream_oauth.key.empty());
  CHECK(parse_ok("upstream_oauth: {redirect_url: \"\", store: \"\"}\n").upstream_oauth == UpstreamOAuth{});
}

TEST_CASE("config: bad oauth settings name the key") {
  const std::string crm = "servers:\n  - name: crm\n    transport: http\n    url: https://crm.example.com/mcp\n    oauth:\n";
  CHECK(parse_error("servers:\n  - name: a\n    command: run\n    oauth: {grant: client_credentials}\n") ==
        "gw.yaml:4: servers[0].oauth: oauth applies to transport: http servers");
  CHECK(parse_error("servers:\n  - name: a\n    transport: http\n    url: https://a/mcp\n    headers: {authorization: x}\n"
                    "    oauth: {grant: client_credentials, client_id: c, client_secret: s}\n") ==
        "gw.yaml:6: servers[0].oauth: oauth and a static Authorization header exclude each other (the gateway sets "
        "Authorization)");
  CHECK(parse_error("servers:\n  - name: a\n    transport: http\n    url: http://crm.internal/mcp\n"
                    "    oauth: {grant: authorization_code}\n") ==
        "gw.yaml:5: servers[0].oauth: an upstream with oauth needs an https:// url (a token must not travel in clear "
        "text); plain http only for a loopback host, got \"http://crm.internal/mcp\"");
  CHECK(parse_ok("servers:\n  - name: a\n    transport: http\n    url: http://127.0.0.1:9/mcp\n"
                 "    oauth: {grant: authorization_code}\n").servers[0].oauth.has_value());
  CHECK(parse_error(crm + "      client_id: c\n") == "gw.yaml:6: servers[0].oauth.grant: required key is missing");
  CHECK(parse_error(crm + "      grant: password\n") ==
        "gw.yaml:6: servers[0].oauth.grant: expected client_credentials | authorization_code | token_exchange, got "
        "\"password\"");
  CHECK(parse_error(crm + "      grant: client_credentials\n      client_secret: s\n") ==
        "gw.yaml:6: servers[0].oauth.client_id: required key is missing");
  CHECK(parse_error(crm + "      grant: client_credentials\n      client_id: c\n") ==
        "gw.yaml:6: servers[0].oauth: grant client_credentials needs the gateway's own credentials: client_secret or "
        "private_key_file");
  CHECK(parse_error(crm + "      grant: client_credentials\n      client_id: c\n      client_secret: s\n"
                          "      private_key_file: k.pem\n") ==
        "gw.yaml:9: servers[0].oauth.private_key_file: give client_secret or private_key_file (private_key_jwt), not "
        "both");
  CHECK(parse_error(crm + "      grant: authorization_code\n      client_secret: s\n") ==
        "gw.yaml:7: servers[0].oauth.client_secret: a client secret or key needs the client_id it belongs to");
  CHECK(parse_error(crm + "      grant: client_credentials\n      client_id: c\n      client_secret: s\n"
                          "      client_id_metadata_url: https://gw/c.json\n") ==
        "gw.yaml:9: servers[0].oauth.client_id_metadata_url: client_id_metadata_url applies to grant authorization_code");
  CHECK(parse_error(crm + "      grant: authorization_code\n      client_id: c\n      client_id_metadata_url: https://gw/c.json\n") ==
        "gw.yaml:8: servers[0].oauth.client_id_metadata_url: give client_id or client_id_metadata_url (which is the "
        "client_id), not both");
  CHECK(parse_error(crm + "      grant: authorization_code\n      client_id_metadata_url: http://127.0.0.1/c.json\n") ==
        "gw.yaml:7: servers[0].oauth.client_id_metadata_url: expected an https:// URL, got \"http://127.0.0.1/c.json\"");
  CHECK(parse_error(crm + "      grant: authorization_code\n      client_id_metadata_url: https://gw.example.com/\n") ==
        "gw.yaml:7: servers[0].oauth.client_id_metadata_url: expected an https:// URL with a path (where the gateway "
        "serves the document), got \"https://gw.example.com/\"");
  CHECK(parse_error(crm + "      grant: client_credentials\n      client_id: c\n      client_secret: s\n"
                          "      authorization_endpoint: https://idp/auth\n") ==
        "gw.yaml:9: servers[0].oauth.authorization_endpoint: authorization_endpoint applies to grant authorization_code");
  CHECK(parse_error(crm + "      grant: token_exchange\n      client_id: c\n      client_secret: s\n") ==
        "gw.yaml:6: servers[0].oauth.grant: token_exchange exchanges the client's own OAuth token: auth.oauth must be "
        "set");
  CHECK(parse_error(crm + "      grant: authorization_code\n      issuer: http://idp.example.com\n") ==
        "gw.yaml:7: servers[0].oauth.issuer: plain http is allowed only for a loopback host; use https, got "
        "\"http://idp.example.com\"");
  CHECK(parse_error(crm + "      grant: authorization_code\n      scopes: [\"a b\"]\n") ==
        "gw.yaml:7: servers[0].oauth.scopes[0]: expected one scope (no spaces), got \"a b\"");
  CHECK(parse_error(crm + "      grant: authorization_code\n      client: c\n") ==
        "gw.yaml:7: servers[0].oauth.client: unknown key \"client\" (did you mean \"client_id\"?)");
  CHECK(parse_error("upstream_oauth: {redirect_url: \"http://gw.example.com/oauth/callback\"}\n") ==
        "gw.yaml:1: upstream_oauth.redirect_url: plain http is allowed only for a loopback host; use https, got "
        "\"http://gw.example.com/oauth/callback\"");
  CHECK(parse_error("upstream_oauth: {stor: x}\n") ==
        "gw.yaml:1: upstream_oauth.stor: unknown key \"stor\" (did you mean \"store\"?)");
  CHECK(parse_error("cluster: {redis: \"redis://r\", secret: s}\nupstream_oauth: {store: t.bin}\n") ==
        "gw.yaml:2: upstream_oauth: store: tokens are kept in Redis when cluster.redis is set; remove "
        "upstream_oauth.store");
  CHECK(parse_error("upstream_oauth: {store: t.bin}\n" + crm + "      grant: authorization_code\n") ==
        "gw.yaml:1: upstream_oauth: the tokens of grant authorization_code are kept encrypted in upstream_oauth.store: "
        "set upstream_oauth.key or cluster.secret");
  CHECK(parse_error("cluster: {redis: \"redis://r\"}\n" + crm + "      grant: authorization_code\n") ==
        "gw.yaml:7: servers[0].oauth: the tokens of grant authorization_code are kept encrypted in Redis "
        "(cluster.redis): set upstream_oauth.key or cluster.secret");
}

TEST_CASE("config: apps.tag_views") {
  CHECK(parse_ok("servers: []\n").apps.tag_views);
  CHECK_FALSE(parse_ok("apps:\n  tag_views: false\n").apps.tag_views);
  CHECK(parse_ok("apps: {}\n").apps.tag_views);
  CHECK(parse_error("apps:\n  tag_views: sometimes\n") ==
        "gw.yaml:2: apps.tag_views: expected true or false, got \"sometimes\"");
  CHECK(parse_error("apps:\n  tag_view: true\n") ==
        "gw.yaml:2: apps.tag_view: unknown key \"tag_view\" (did you mean \"tag_views\"?)");
  CHECK(parse_error("apps: [x]\n") == "gw.yaml:1: apps: expected a mapping, got a list");
}
