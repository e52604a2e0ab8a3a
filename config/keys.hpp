#pragma once
// Every key the loader accepts, in one table. The readers of config.cpp and
// access.cpp take the keys of each fixed-key mapping from here, and a unit
// test compares the table with the reference, docs/configuration.md, so no
// key is accepted without being documented there.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mcpgw::config::keys {

inline constexpr std::string_view kTop[] = {
    "listen", "admin",   "auth",    "limits",  "naming",  "filters",      "modes",             "default_mode", "chain",
    "welcome", "sagas",  "audit",   "servers", "plugins", "instructions", "shutdown_grace_ms", "discovery",    "cluster",
    "upstream_oauth", "apps", "tasks", "telemetry", "startup_wait_ms", "redact", "policies", "integrity"};
inline constexpr std::string_view kListen[] = {"host",         "port",      "path",           "allowed_origins",
                                               "allowed_hosts", "max_body_bytes", "heartbeat_ms", "page_size",
                                               "session_idle_s", "tls",     "reuse_port"};
inline constexpr std::string_view kListenTls[] = {"cert_file", "key_file"};
inline constexpr std::string_view kAdmin[] = {"host", "port"};
inline constexpr std::string_view kAuth[] = {"bearer_tokens", "oauth"};
inline constexpr std::string_view kBearerToken[] = {"token", "name", "modes"};
inline constexpr std::string_view kOAuth[] = {"issuer",          "audience",    "jwks_url",        "jwks_file",
                                              "authorization_servers", "required_scopes", "scope_modes",
                                              "principal_claim", "leeway_s"};
inline constexpr std::string_view kLimits[] = {"calls_per_s",
                                               "burst",
                                               "max_in_flight_per_session",
                                               "max_sessions",
                                               "max_batch_size",
                                               "batch_concurrency",
                                               "max_client_requests_per_call",
                                               "max_client_requests_per_session"};
inline constexpr std::string_view kNaming[] = {"separator", "description_prefix", "max_length"};
inline constexpr std::string_view kFilters[] = {"include_slices", "exclude_slices", "include_tools", "exclude_tools"};
inline constexpr std::string_view kMode[] = {"description",   "include_slices", "exclude_slices",
                                             "include_tools", "exclude_tools",  "discovery"};
inline constexpr std::string_view kChain[] = {"resolve", "max_depth", "merge"};
inline constexpr std::string_view kApps[] = {"tag_views"};
inline constexpr std::string_view kWelcome[] = {"strategy", "tool", "arguments", "timeout_ms"};
inline constexpr std::string_view kSagas[] = {"secret", "ttl_s"};
inline constexpr std::string_view kAudit[] = {"path", "arguments"};
inline constexpr std::string_view kRedact[] = {"builtin", "patterns", "in", "action"};
inline constexpr std::string_view kRedactPattern[] = {"name", "regex"};
inline constexpr std::string_view kTasks[] = {"gateway", "max_per_principal", "max_result_bytes"};
inline constexpr std::string_view kCluster[] = {"redis", "secret", "session_ttl_s"};
inline constexpr std::string_view kServer[] = {
    "name",        "transport",        "command",  "args",    "env",        "cwd",
    "url",         "headers",          "forward_headers",     "proxy_tools", "prefix",
    "slices",      "filters",          "welcome_priority",    "timeout_ms",  "session",
    "required",    "tls",              "max_response_bytes",  "protocol",    "max_concurrency",
    "circuit",     "oauth",            "tools"};
inline constexpr std::string_view kToolOverride[] = {"name", "description", "title", "annotations", "arguments"};
inline constexpr std::string_view kArgumentOverride[] = {"value", "default", "name", "description"};
inline constexpr std::string_view kServerTls[] = {"ca_file", "verify"};
inline constexpr std::string_view kCircuit[] = {"failures", "open_ms"};
inline constexpr std::string_view kPlugin[] = {"path", "config", "isolation", "timeout_ms", "memory_mb", "max_concurrency"};
inline constexpr std::string_view kTelemetry[] = {"otlp"};
inline constexpr std::string_view kOtlp[] = {"endpoint", "headers", "sample_ratio", "service_name"};
inline constexpr std::string_view kServerOAuth[] = {"grant",          "client_id",      "client_secret",
                                                    "private_key_file", "scopes",       "issuer",
                                                    "token_endpoint", "authorization_endpoint", "client_id_metadata_url"};
inline constexpr std::string_view kPolicy[] = {"name", "match", "allow", "deny", "message"};
inline constexpr std::string_view kPolicyMatch[] = {"tools", "modes", "principals"};
inline constexpr std::string_view kIntegrity[] = {"pins", "store", "strip_invisible"};
inline constexpr std::string_view kUpstreamOAuth[] = {"redirect_url", "store", "key"};

/// A mapping with a fixed set of keys and where it sits in the file, as
/// the reference writes it: "" for the top level, `servers[]` for every
/// item of a list, `modes.<name>` for the value of any key of a free-form
/// mapping.
struct Section {
  std::string_view path;
  std::span<const std::string_view> keys;
};

inline constexpr Section kSections[] = {
    {"", kTop},
    {"listen", kListen},
    {"listen.tls", kListenTls},
    {"admin", kAdmin},
    {"auth", kAuth},
    {"auth.bearer_tokens[]", kBearerToken},
    {"auth.oauth", kOAuth},
    {"limits", kLimits},
    {"naming", kNaming},
    {"filters", kFilters},
    {"modes.<name>", kMode},
    {"chain", kChain},
    {"apps", kApps},
    {"welcome", kWelcome},
    {"sagas", kSagas},
    {"audit", kAudit},
    {"redact", kRedact},
    {"redact.patterns[]", kRedactPattern},
    {"cluster", kCluster},
    {"tasks", kTasks},
    {"servers[]", kServer},
    {"servers[].tls", kServerTls},
    {"servers[].filters", kFilters},
    {"servers[].circuit", kCircuit},
    {"servers[].oauth", kServerOAuth},
    {"servers[].tools.<tool>", kToolOverride},
    {"servers[].tools.<tool>.arguments.<argument>", kArgumentOverride},
    {"upstream_oauth", kUpstreamOAuth},
    {"plugins[]", kPlugin},
    {"telemetry", kTelemetry},
    {"telemetry.otlp", kOtlp},
    {"policies[]", kPolicy},
    {"policies[].match", kPolicyMatch},
    {"integrity", kIntegrity},
};

/// Every accepted key as the reference names it (`listen.tls.cert_file`,
/// `servers[].name`), in table order.
std::vector<std::string> all();

}  // namespace mcpgw::config::keys
