#pragma once
// The gateway's configuration as plain values: what gateway.yaml says, after
// ${VAR} interpolation, defaults and validation. Nothing at run time reads
// YAML; every module receives the parts of this it needs.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/tool_overrides.hpp"
#include "config/redact.hpp"
#include "config/policies.hpp"
#include "config/integrity.hpp"
#include "util/result.hpp"

namespace mcpgw::config {

/// `listen.tls`: serve HTTPS with this certificate chain and key (PEM).
struct ListenTls {
  std::string cert_file;
  std::string key_file;
  bool enabled() const { return !cert_file.empty(); }
  bool operator==(const ListenTls&) const = default;
};

/// `listen:` — where and how the Streamable HTTP endpoint is served.
struct Listen {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string path = "/mcp";
  /// Origin allow-list; empty = only loopback origins (or no Origin header).
  std::vector<std::string> allowed_origins;
  /// Host header allow-list (DNS-rebinding protection); empty = loopback
  /// names when listening on loopback, anything otherwise.
  std::vector<std::string> allowed_hosts;
  /// Largest accepted request body; larger ones get HTTP 413.
  std::size_t max_body_bytes = 4 * 1024 * 1024;
  /// Interval of `: ping` comments on open SSE streams.
  int heartbeat_ms = 15000;
  /// Items per page of the lists the gateway serves (tools/list, ...).
  int page_size = 500;
  /// Sessions idle for longer than this are ended (0 = never).
  int session_idle_s = 3600;
  ListenTls tls;
  /// SO_REUSEPORT: several processes share the port (the kernel splits
  /// connections between them). Off by default: a port in use is an error.
  bool reuse_port = false;
  bool operator==(const Listen&) const = default;
};

/// One entry of `auth.bearer_tokens`.
struct BearerToken {
  std::string token;
  std::string name;                 // principal name in logs and audit
  std::vector<std::string> modes;   // modes the principal may use; empty = any
  bool operator==(const BearerToken&) const = default;
};

/// `auth.oauth`: the gateway as an OAuth 2.1 resource server.
struct OAuth {
  std::string issuer;               // must equal the token's iss
  std::string audience;             // must be in the token's aud; the resource in the metadata
  std::string jwks_url;             // https (http only for a loopback host); or
  std::string jwks_file;            // absolute
  std::vector<std::string> authorization_servers;
  std::vector<std::string> required_scopes;
  /// scope -> modes it opens, in file order; empty = every mode.
  std::vector<std::pair<std::string, std::vector<std::string>>> scope_modes;
  std::string principal_claim = "sub";
  int leeway_s = 60;
  bool operator==(const OAuth&) const = default;
};

struct Auth {
  bool enabled = false;             // false when `auth:` is absent
  std::vector<BearerToken> bearer_tokens;
  std::optional<OAuth> oauth;
  bool operator==(const Auth&) const = default;
};

/// `limits:`
struct Limits {
  int calls_per_s = 0;              // per principal; 0 = no limit
  int burst = 0;                    // 0 = calls_per_s
  int max_in_flight_per_session = 0;
  int max_sessions = 10000;         // 0 = no limit
  int max_batch_size = 100;         // entries of one JSON-RPC batch; 0 = no limit
  int batch_concurrency = 8;        // entries of one batch running at once
  int max_client_requests_per_call = 64;      // server-to-client requests of one call awaiting the client
  int max_client_requests_per_session = 256;  // the same, over every call of a session
  bool operator==(const Limits&) const = default;
};

/// `admin:` — a second listener for /healthz, /readyz and /metrics.
struct Admin {
  std::string host = "127.0.0.1";
  int port = 9090;
  bool operator==(const Admin&) const = default;
};

struct Naming {
  std::string separator = ":";
  std::string description_prefix = "[Proxied from {server}] ";
  int max_length = 0;               // 0 = no limit
};

/// Filter keys, shared by `filters:`, `servers[].filters` and `modes.<name>`.
struct Filters {
  std::vector<std::string> include_slices;
  std::vector<std::string> exclude_slices;
  std::vector<std::string> include_tools;
  std::vector<std::string> exclude_tools;
  bool operator==(const Filters&) const = default;
};

/// How a mode's tools/list shows its tools: all of them, or only the two
/// meta tools search_tools and call_tool (Tool search).
enum class Discovery { All, Search };

struct Mode {
  std::string name;
  std::string description;
  Filters filters;
  /// `modes.<name>.discovery`; unset = the top-level `discovery`.
  std::optional<Discovery> discovery;
};

struct Chain {
  bool resolve = true;
  int max_depth = 5;
  enum class Merge { All, Last } merge = Merge::All;
};

/// `apps:` — MCP Apps (the `io.modelcontextprotocol/ui` extension).
struct Apps {
  /// Serve each view (`ui://` HTML) of a prefixed server with a small
  /// script, first in its <head>, that names the server on the tools/call
  /// and resources/read requests the view sends its host, so its bare-name
  /// calls reach that server.
  bool tag_views = true;
  bool operator==(const Apps&) const = default;
};

struct Welcome {
  enum class Strategy { First, Priority, Tool, None } strategy = Strategy::First;
  std::string tool;
  std::string arguments_json = "{}";  // compact JSON object
  int timeout_ms = 2000;
};

struct Sagas {
  std::vector<std::string> secrets;   // first signs, all verify
  int ttl_s = 900;
};

/// `cluster`: several replicas behind a load balancer (docs/operations.md, "Scale-out").
struct Cluster {
  /// `redis://[:password@]host[:port][/db]`; empty = this process alone.
  std::string redis;
  std::string redis_host;  ///< from `redis`
  int redis_port = 6379;
  int redis_db = 0;
  std::string redis_password;
  /// Seal session ids; the first seals, every one opens (rotation). Empty =
  /// ids are random and known to this process only.
  std::vector<std::string> secrets;
  /// How long a sealed session id stays valid after its initialize.
  int session_ttl_s = 86400;
  bool operator==(const Cluster&) const = default;
};

/// `servers[].tls`: how an https:// upstream is verified.
struct UpstreamTls {
  std::string ca_file;  ///< empty = the system's CA store
  bool verify = true;   ///< false = no certificate check (logged at start)
  bool operator==(const UpstreamTls&) const = default;
};

/// `servers[].circuit`: the breaker that fails calls fast while a server
/// keeps failing.
struct Circuit {
  int failures = 5;     ///< consecutive failed calls that open it; 0 = no breaker
  int open_ms = 10000;  ///< how long it stays open before one probe call goes through
  bool operator==(const Circuit&) const = default;
};

/// `servers[].oauth`: the gateway as an OAuth client of an HTTP upstream
/// (README, "Upstream OAuth"). Endpoints left empty are discovered from the
/// upstream's 401 (RFC 9728) and the issuer's metadata (RFC 8414).
struct ServerOAuth {
  enum class Grant { ClientCredentials, AuthorizationCode, TokenExchange } grant = Grant::ClientCredentials;
  std::string client_id;         ///< "" (authorization_code only): a CIMD, or dynamic registration
  std::string client_secret;     ///< client_secret_basic
  std::string private_key_file;  ///< absolute; private_key_jwt (RFC 7523) instead of a secret
  std::vector<std::string> scopes;
  std::string issuer;                  ///< "" = from the upstream's protected resource metadata
  std::string token_endpoint;          ///< "" = from the issuer's metadata
  std::string authorization_endpoint;  ///< the same (authorization_code)
  /// A Client ID Metadata Document URL whose document the gateway serves
  /// (authorization_code); it is then the client_id.
  std::string client_id_metadata_url;
  bool operator==(const ServerOAuth&) const = default;
};

struct Server {
  std::string name;
  enum class Transport { Stdio, Http } transport = Transport::Stdio;
  // stdio
  std::string command;                // absolute when it has a slash, else looked up in PATH
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string cwd;                    // absolute; default (stdio): the file's directory
  // http
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> forward_headers;
  UpstreamTls tls;

  bool proxy_tools = true;
  bool prefix = true;
  /// slice name -> globs over the server's upstream tool names, in file order.
  std::vector<std::pair<std::string, std::vector<std::string>>> slices;
  std::optional<Filters> filters;     // replaces the top-level filters
  int welcome_priority = 0;
  int timeout_ms = 30000;
  /// Largest answer accepted from this server (one message, or an HTTP
  /// body); a larger one fails the request with an error naming the server.
  std::size_t max_response_bytes = 64 * 1024 * 1024;
  enum class Session { Shared, PerClient } session = Session::Shared;
  /// Counted by /readyz.
  bool required = true;
  /// Which MCP revision to speak: Auto = the newest both sides support
  /// (a per_client connection mirrors its client's), else exactly this one.
  enum class Protocol { Auto, Stateful, Stateless } protocol = Protocol::Auto;
  /// Calls in flight to this server at once; more wait (within their
  /// timeout). 0 = no limit.
  int max_concurrency = 0;
  Circuit circuit;
  std::optional<ServerOAuth> oauth;   ///< http servers only
  std::vector<ToolOverride> tools;    ///< `tools:` overrides, in file order
  bool operator==(const Server&) const = default;
};

/// `tasks:` — MCP tasks through the gateway (README, "Tasks").
struct Tasks {
  /// Any visible tool can be called as a task, run by the gateway when its
  /// upstream does not run it as one.
  bool gateway = false;
  /// Tasks one principal may hold at once (running, or finished with the
  /// result kept until its ttl); past it a task-augmented call gets -32000.
  int max_per_principal = 1000;
  /// A gateway-made task whose result is larger ends as failed.
  std::size_t max_result_bytes = 16 * 1024 * 1024;
  bool operator==(const Tasks&) const = default;
};

struct Plugin {
  /// Shared library: absolute when the file gave a path with a slash
  /// (resolved against the file's directory), else searched like any
  /// library (ld.so rules).
  std::string path;
  std::string config_json = "{}";     // compact JSON object, handed to the plugin
  /// Where the plugin's code runs: a host process of its own (the
  /// default), or inside the gateway (trusted code only).
  enum class Isolation { Process, None };
  Isolation isolation = Isolation::Process;
  /// A call running longer fails; under process isolation its host is replaced.
  int timeout_ms = 60000;
  /// The host's memory limit (process isolation); 0 = none.
  int memory_mb = 1024;
  /// Calls at once in this plugin; more wait within timeout_ms.
  int max_concurrency = 16;
  bool operator==(const Plugin&) const = default;
};

/// `audit:` — one JSON line per call, refusal and round.
struct Audit {
  std::string path;  ///< "" = off, "-" = stderr, else a file (appended, reopened on SIGHUP)
  enum class Arguments { Digest, Full, None } arguments = Arguments::Digest;
  bool operator==(const Audit&) const = default;
};

/// `telemetry.otlp`: spans exported over OTLP/HTTP (docs/operations.md, "Traces").
struct Otlp {
  /// Base URL (http:// or https://); spans go to <endpoint>/v1/traces. Empty = off.
  std::string endpoint;
  std::vector<std::pair<std::string, std::string>> headers;
  /// Share of traces exported, 0 to 1, decided by trace id.
  double sample_ratio = 1.0;
  std::string service_name = "mcpgw";
  bool operator==(const Otlp&) const = default;
};

struct Telemetry {
  Otlp otlp;
  bool operator==(const Telemetry&) const = default;
};

/// `upstream_oauth`: what servers with oauth.grant authorization_code share.
struct UpstreamOAuth {
  /// The gateway's callback as providers and browsers see it; "" = the
  /// listener's own address (http://<listen.host>:<port>/oauth/callback).
  std::string redirect_url;
  /// File (absolute) of the tokens at rest, encrypted; "" = memory only, or
  /// Redis when cluster.redis is set.
  std::string store;
  /// Encryption key of the stored tokens and of the consent links; "" =
  /// cluster.secret's first.
  std::string key;
  bool operator==(const UpstreamOAuth&) const = default;
};

/// The whole file.
struct Config {
  std::string source;                 // file it was read from
  Listen listen;
  std::optional<Admin> admin;
  Auth auth;
  Limits limits;
  Naming naming;
  Filters filters;
  std::vector<Mode> modes;
  std::string default_mode = "all";
  /// `discovery:`, the default of every mode (and of mode "all").
  Discovery discovery = Discovery::All;
  Chain chain;
  Apps apps;
  Welcome welcome;
  Sagas sagas;
  Audit audit;
  Redact redact;
  Cluster cluster;
  Tasks tasks;
  Telemetry telemetry;
  UpstreamOAuth upstream_oauth;
  Integrity integrity;
  std::vector<Server> servers;
  std::vector<Plugin> plugins;
  /// `policies`: who may call what, in order (config/policies.hpp).
  std::vector<Policy> policies;
  /// Text put before the welcome text in `instructions`.
  std::string instructions;
  /// How long SIGTERM waits for in-flight calls.
  int shutdown_grace_ms = 10000;
  /// How long a request waits for servers still in their first connection
  /// attempt (initialize, lists, calls), so that a client connecting right
  /// after start sees what a later one sees; 0 = no waiting.
  int startup_wait_ms = 10000;
};

/// Looks a variable up in the environment; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

/// The process environment (getenv).
std::optional<std::string> process_env(const std::string& name);

/// Parses and validates YAML text. `source` names the file in messages, which
/// have the form `FILE:LINE: KEY: what is wrong` (KEY as a path like
/// `servers[1].timeout_ms`), and its directory is where the relative paths
/// of the file start (config/paths.hpp): every path in the result is
/// absolute.
Result<Config> parse(const std::string& yaml_text, const std::string& source,
                     EnvLookup env = process_env);

/// Reads `path` and parses it.
Result<Config> load(const std::string& path, EnvLookup env = process_env);

}  // namespace mcpgw::config
