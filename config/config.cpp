#include "config/config.hpp"
#include "config/integrity.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <string_view>

#include "config/access.hpp"
#include "config/keys.hpp"
#include "config/oauth.hpp"
#include "config/paths.hpp"
#include "config/read_tool_overrides.hpp"
#include "config/yaml_value.hpp"

namespace mcpgw::config {
namespace {

using namespace yaml;

bool is_loopback(std::string host) {
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (host == "localhost" || host == "::1") return true;
  // 127.0.0.0/8, written as a dotted quad.
  std::string_view rest = host;
  for (int octet = 0; octet < 4; ++octet) {
    auto dot = rest.find('.');
    std::string_view part = rest.substr(0, dot);
    auto v = to_integer(part);
    if (!v || part[0] == '+' || part[0] == '-' || *v > 255 || (octet == 0 && *v != 127)) return false;
    if ((octet < 3) != (dot != std::string_view::npos)) return false;
    rest = octet < 3 ? rest.substr(dot + 1) : std::string_view{};
  }
  return true;
}



void read_filters(const Fields& f, Filters& out) {
  f.read("include_slices", out.include_slices);
  f.read("exclude_slices", out.exclude_slices);
  f.read("include_tools", out.include_tools);
  f.read("exclude_tools", out.exclude_tools);
}

Filters read_filters(const Value& v) {
  Filters out;
  read_filters(v.fields(keys::kFilters), out);
  return out;
}

using ModeCheck = std::function<bool(const std::string&)>;

Listen read_listen(const Value& v, bool auth_enabled) {
  Listen l;
  Fields f = v.fields(keys::kListen);
  if (auto host = f.get("host")) {
    l.host = host->non_empty_text();
    if (!auth_enabled && !is_loopback(l.host)) host->fail("serving a non-loopback address requires auth");
  }
  f.read("port", l.port, 0, 65535);  // 0 = pick a free port
  if (auto path = f.get("path")) {
    l.path = path->text();
    // Modes are served below it as <path>/<mode>.
    if (l.path.size() < 2 || l.path.front() != '/' || l.path.back() == '/') {
      path->fail("expected a path starting with \"/\", not ending with \"/\", got " + quote(l.path));
    }
  }
  f.read("allowed_origins", l.allowed_origins);
  f.read("allowed_hosts", l.allowed_hosts);
  if (auto bytes = f.get("max_body_bytes")) l.max_body_bytes = static_cast<std::size_t>(bytes->integer(1));
  f.read("heartbeat_ms", l.heartbeat_ms, 1);
  f.read("page_size", l.page_size, 1);
  f.read("session_idle_s", l.session_idle_s, 0);
  if (auto tls = f.get("tls"); tls && !tls->is_null()) {
    Fields t = tls->fields(keys::kListenTls);
    Value cert = t.required("cert_file"), key = t.required("key_file");
    cert.non_empty_text();
    key.non_empty_text();
    l.tls.cert_file = cert.path();
    l.tls.key_file = key.path();
  }
  f.read("reuse_port", l.reuse_port);
  return l;
}

Auth read_auth(const Value& v, const ModeCheck& known_mode) {
  Auth a;
  Fields fields = v.fields(keys::kAuth);
  if (auto oauth = fields.get("oauth"); oauth && !oauth->is_null()) {
    a.oauth = read_oauth(*oauth, known_mode);
    a.enabled = true;
  }
  auto tokens = fields.get("bearer_tokens");
  if (!tokens) return a;  // `auth: {}` is the same as no `auth`
  std::vector<Value> items = tokens->items();
  // An empty list would lock every client out; say so rather than guess.
  if (items.empty()) tokens->fail("expected at least one token (remove \"auth\" to turn authentication off)");
  for (std::size_t i = 0; i < items.size(); ++i) {
    Fields f = items[i].fields(keys::kBearerToken);
    BearerToken t;
    Value token = f.required("token");
    t.token = token.non_empty_text();
    t.name = f.required("name").non_empty_text();
    if (auto modes = f.get("modes")) {
      for (const Value& mode : modes->items()) {
        t.modes.push_back(mode.text());
        if (!known_mode(t.modes.back())) mode.fail("unknown mode " + quote(t.modes.back()));
      }
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (a.bearer_tokens[j].token == t.token) {
        token.fail("the same token as auth.bearer_tokens[" + std::to_string(j) + "]");
      }
    }
    a.bearer_tokens.push_back(std::move(t));
  }
  a.enabled = true;
  return a;
}

Naming read_naming(const Value& v) {
  Naming n;
  Fields f = v.fields(keys::kNaming);
  if (auto sep = f.get("separator")) n.separator = sep->non_empty_text();
  f.read("description_prefix", n.description_prefix);
  if (auto len = f.get("max_length")) {
    n.max_length = len->integer(0);
    // Shorter names cannot hold the hash suffix that keeps them unique.
    if (n.max_length != 0 && n.max_length < 16) {
      len->fail("expected 0 (no limit) or an integer >= 16, got " + std::to_string(n.max_length));
    }
  }
  return n;
}

Discovery read_discovery(const Value& v) {
  return v.one_of<Discovery>({{"all", Discovery::All}, {"search", Discovery::Search}});
}

std::vector<Mode> read_modes(const Value& v) {
  std::vector<Mode> modes;
  for (const Entry& e : v.entries()) {
    if (!is_identifier(e.name)) e.key.fail("expected a mode name of [A-Za-z0-9_-]+, got " + quote(e.name));
    if (e.name == "all") e.key.fail("a mode may not be named \"all\" (it means every tool)");
    Fields f = e.value.fields(keys::kMode);
    Mode m;
    m.name = e.name;
    f.read("description", m.description);
    read_filters(f, m.filters);
    if (auto d = f.get("discovery")) m.discovery = read_discovery(*d);
    modes.push_back(std::move(m));
  }
  return modes;
}

Chain read_chain(const Value& v) {
  Chain c;
  Fields f = v.fields(keys::kChain);
  f.read("resolve", c.resolve);
  f.read("max_depth", c.max_depth, 1);
  if (auto m = f.get("merge"))
    c.merge = m->one_of<Chain::Merge>({{"all", Chain::Merge::All}, {"last", Chain::Merge::Last}});
  return c;
}

Apps read_apps(const Value& v) {
  Apps apps;
  Fields f = v.fields(keys::kApps);
  f.read("tag_views", apps.tag_views);
  return apps;
}

Welcome read_welcome(const Value& v) {
  using S = Welcome::Strategy;
  Welcome w;
  Fields f = v.fields(keys::kWelcome);
  if (auto strategy = f.get("strategy")) {
    w.strategy = strategy->one_of<S>(
        {{"first", S::First}, {"priority", S::Priority}, {"tool", S::Tool}, {"none", S::None}});
  }
  if (w.strategy == S::Tool) {
    w.tool = f.required("tool").text();
    if (w.tool.empty()) f.get("tool")->fail("must name the welcome tool with strategy: tool");
  } else {
    f.read("tool", w.tool);
  }
  if (auto args = f.get("arguments"); args && !args->is_null()) {
    if (!args->is_map()) args->fail("expected a mapping, got " + args->found());
    w.arguments_json = args->json();
  }
  f.read("timeout_ms", w.timeout_ms, 1);
  return w;
}

Sagas read_sagas(const Value& v) {
  Sagas s;
  Fields f = v.fields(keys::kSagas);
  if (auto secret = f.get("secret")) {
    if (secret->is_map()) secret->fail("expected a string or a list of strings, got a mapping");
    // Empty entries are dropped so that `[${NEW}, ${OLD:-}]` works before
    // and after a rotation.
    std::vector<std::string> all = secret->is_list() ? secret->strings() : std::vector{secret->text()};
    for (std::string& one : all) {
      if (!one.empty()) s.secrets.push_back(std::move(one));
    }
  }
  f.read("ttl_s", s.ttl_s, 1);
  return s;
}

Tasks read_tasks(const Value& v) {
  Tasks t;
  Fields f = v.fields(keys::kTasks);
  f.read("gateway", t.gateway);
  f.read("max_per_principal", t.max_per_principal, 1);
  if (auto bytes = f.get("max_result_bytes")) t.max_result_bytes = static_cast<std::size_t>(bytes->integer(1));
  return t;
}

/// Splits `redis://[:password@]host[:port][/db]` into `c`.
void read_redis_url(const Value& v, Cluster& c) {
  c.redis = v.text();
  if (c.redis.empty()) return;
  auto bad = [&](const std::string& why) {
    v.fail("expected redis://[:password@]host[:port][/db] (" + why + "), got " + quote(c.redis));
  };
  std::string_view rest = c.redis;
  if (rest.substr(0, 8) != "redis://") bad("the scheme must be redis://; TLS (rediss://) is not supported");
  rest.remove_prefix(8);
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view user = rest.substr(0, at);
    if (auto colon = user.find(':'); colon != std::string_view::npos) c.redis_password = user.substr(colon + 1);
    else bad("credentials must be :password@");
    rest.remove_prefix(at + 1);
  }
  std::string_view authority = rest.substr(0, rest.find('/'));
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    std::string_view db = rest.substr(slash + 1);
    auto n = to_integer(db);
    if (!db.empty() && (!n || *n < 0 || *n > 65535)) bad("the database must be a number");
    c.redis_db = n ? static_cast<int>(*n) : 0;
  }
  std::string_view host = authority;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos) bad("unclosed [");
    host = authority.substr(1, close - 1);
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() != ':') bad("expected :port after ]");
    if (!authority.empty()) authority.remove_prefix(1);
    else authority = {};
  } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    authority.remove_prefix(colon + 1);
  } else {
    authority = {};
  }
  if (host.empty()) bad("the host is missing");
  c.redis_host = host;
  if (!authority.empty()) {
    auto port = to_integer(authority);
    if (!port || *port < 1 || *port > 65535) bad("the port must be from 1 to 65535");
    c.redis_port = static_cast<int>(*port);
  }
}

Cluster read_cluster(const Value& v) {
  Cluster c;
  Fields f = v.fields(keys::kCluster);
  if (auto redis = f.get("redis")) read_redis_url(*redis, c);
  if (auto secret = f.get("secret")) {
    if (secret->is_map()) secret->fail("expected a string or a list of strings, got a mapping");
    std::vector<std::string> all = secret->is_list() ? secret->strings() : std::vector{secret->text()};
    for (std::string& one : all) {
      if (!one.empty()) c.secrets.push_back(std::move(one));
    }
  }
  f.read("session_ttl_s", c.session_ttl_s, 60);
  return c;
}

Telemetry read_telemetry(const Value& v) {
  Telemetry t;
  Fields f = v.fields(keys::kTelemetry);
  auto otlp = f.get("otlp");
  if (!otlp || otlp->is_null()) return t;
  Fields o = otlp->fields(keys::kOtlp);
  if (auto endpoint = o.get("endpoint")) {
    t.otlp.endpoint = endpoint->text();
    std::string scheme = t.otlp.endpoint.substr(0, t.otlp.endpoint.find("://"));
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!t.otlp.endpoint.empty() && ((scheme != "http" && scheme != "https") ||
                                     t.otlp.endpoint.find("://") == std::string::npos ||
                                     t.otlp.endpoint.size() == scheme.size() + 3))
      endpoint->fail("expected an http:// or https:// URL (the collector's OTLP/HTTP base, e.g. http://collector:4318), got " +
                     quote(t.otlp.endpoint));
  }
  if (auto headers = o.get("headers")) t.otlp.headers = headers->string_map();
  if (auto ratio = o.get("sample_ratio")) t.otlp.sample_ratio = ratio->number(0, 1);
  if (auto name = o.get("service_name")) t.otlp.service_name = name->non_empty_text();
  return t;
}

/// What the servers' oauth sections tell the checks across sections.
struct OAuthSeen {
  std::optional<Value> first_code_grant;  ///< the oauth of the first authorization_code server
};

Server read_server(const Value& v, const Naming& naming, const Auth& auth, std::map<std::string, int>& first_line,
                   OAuthSeen& seen) {
  using T = Server::Transport;
  Server s;
  Fields f = v.fields(keys::kServer);
  Value name = f.required("name");
  s.name = name.text();
  if (!is_identifier(s.name)) name.fail("expected a server name of [A-Za-z0-9_-]+, got " + quote(s.name));
  if (s.name.find(naming.separator) != std::string::npos) {
    name.fail("server name " + quote(s.name) + " contains the naming separator " + quote(naming.separator));
  }
  if (auto [it, fresh] = first_line.emplace(s.name, name.line()); !fresh) {
    name.fail("duplicate server name " + quote(s.name) + " (first defined at line " +
              std::to_string(it->second) + ")");
  }
  if (auto t = f.get("transport")) s.transport = t->one_of<T>({{"stdio", T::Stdio}, {"http", T::Http}});
  if (s.transport == T::Stdio) s.command = f.required("command").program();
  f.read("args", s.args);
  if (auto env = f.get("env")) s.env = env->string_map();
  f.read_path("cwd", s.cwd);
  // The file's directory, not mcpgw's: the same child whoever starts mcpgw.
  if (s.transport == T::Stdio && s.cwd.empty()) s.cwd = v.base_dir();
  if (s.transport == T::Http) {
    Value url = f.required("url");
    s.url = url.text();
    auto scheme_end = s.url.find("://");
    std::string scheme = s.url.substr(0, scheme_end);
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (scheme_end == std::string::npos || (scheme != "http" && scheme != "https") ||
        s.url.size() == scheme_end + 3) {
      url.fail("expected an http:// or https:// URL, got " + quote(s.url));
    }
  }
  if (auto headers = f.get("headers")) s.headers = headers->string_map();
  f.read("forward_headers", s.forward_headers);
  for (const auto& h : s.forward_headers) {
    // No token passthrough: the client's credentials are for the gateway.
    std::string l = h;
    std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (l == "authorization" || l == "cookie" || l == "host" || l.empty())
      f.get("forward_headers")->fail("cannot forward " + quote(h) + " (the client's credentials stay at the gateway; give upstream credentials in headers)");
  }
  if (auto tls = f.get("tls"); tls && !tls->is_null()) {
    if (s.transport != T::Http) tls->fail("tls applies to transport: http servers");
    Fields t = tls->fields(keys::kServerTls);
    t.read_path("ca_file", s.tls.ca_file);
    t.read("verify", s.tls.verify);
  }
  if (auto bytes = f.get("max_response_bytes")) {
    s.max_response_bytes = static_cast<std::size_t>(bytes->integer(1024));
  }
  f.read("proxy_tools", s.proxy_tools);
  f.read("prefix", s.prefix);
  if (auto slices = f.get("slices")) {
    for (const Entry& e : slices->entries()) {
      if (e.name.empty()) e.key.fail("a slice name must not be empty");
      s.slices.emplace_back(e.name, e.value.strings());
    }
  }
  if (auto filters = f.get("filters")) s.filters = read_filters(*filters);
  f.read("welcome_priority", s.welcome_priority, INT_MIN);
  f.read("timeout_ms", s.timeout_ms, 1);
  if (auto session = f.get("session")) {
    s.session = session->one_of<Server::Session>(
        {{"shared", Server::Session::Shared}, {"per_client", Server::Session::PerClient}});
  }
  f.read("required", s.required);
  if (auto protocol = f.get("protocol")) {
    using P = Server::Protocol;
    s.protocol = protocol->one_of<P>({{"auto", P::Auto}, {"2025-11-25", P::Stateful}, {"2026-07-28", P::Stateless}});
  }
  f.read("max_concurrency", s.max_concurrency, 0);
  if (auto circuit = f.get("circuit"); circuit && !circuit->is_null()) {
    Fields c = circuit->fields(keys::kCircuit);
    c.read("failures", s.circuit.failures, 0);
    c.read("open_ms", s.circuit.open_ms, 1);
  }
  if (auto oauth = f.get("oauth"); oauth && !oauth->is_null()) {
    s.oauth = read_server_oauth(*oauth, s, auth);
    if (s.oauth->grant == ServerOAuth::Grant::AuthorizationCode && !seen.first_code_grant)
      seen.first_code_grant = *oauth;
  }
  if (auto tools = f.get("tools")) s.tools = read_tool_overrides(*tools);
  return s;
}

Audit read_audit(const Value& v) {
  Audit a;
  Fields f = v.fields(keys::kAudit);
  if (auto path = f.get("path")) {
    std::string text = path->text();
    // "-" is stderr, not a file of that name.
    if (text == "-" || text.empty()) a.path = text;
    else a.path = path->path();
  }
  if (auto args = f.get("arguments")) {
    using A = Audit::Arguments;
    a.arguments = args->one_of<A>({{"digest", A::Digest}, {"full", A::Full}, {"none", A::None}});
  }
  return a;
}

Plugin read_plugin(const Value& v) {
  Plugin p;
  Fields f = v.fields(keys::kPlugin);
  p.path = f.required("path").program();
  if (auto config = f.get("config"); config && !config->is_null()) {
    if (!config->is_map()) config->fail("expected a mapping (handed to the plugin as a JSON object), got " + config->found());
    p.config_json = config->json();
  }
  if (auto iso = f.get("isolation"))
    p.isolation = iso->one_of<Plugin::Isolation>({{"process", Plugin::Isolation::Process}, {"none", Plugin::Isolation::None}});
  f.read("timeout_ms", p.timeout_ms, 1);
  f.read("memory_mb", p.memory_mb, 0, 1 << 20);
  f.read("max_concurrency", p.max_concurrency, 1, 4096);
  return p;
}

Config read_config(const Value& root, const std::string& source) {
  if (root.is_null()) root.fail("the file is empty (expected a mapping of settings)");
  if (!root.is_map()) root.fail("expected a mapping of settings at the top level, got " + root.found());
  Fields f = root.fields(keys::kTop);
  Config c;
  c.source = source;
  // Read in dependency order, not file order: modes before the references to
  // them, auth before the host that needs it, naming before server names.
  if (auto v = f.get("modes")) c.modes = read_modes(*v);
  ModeCheck known_mode = [&](const std::string& name) {
    return name == "all" ||
           std::any_of(c.modes.begin(), c.modes.end(), [&](const Mode& m) { return m.name == name; });
  };
  if (auto v = f.get("default_mode")) {
    c.default_mode = v->text();
    if (!known_mode(c.default_mode))
      v->fail("expected \"all\" or a key of modes, got " + quote(c.default_mode));
  }
  if (auto v = f.get("discovery")) c.discovery = read_discovery(*v);
  if (auto v = f.get("auth")) c.auth = read_auth(*v, known_mode);
  if (auto v = f.get("listen")) c.listen = read_listen(*v, c.auth.enabled);
  if (auto v = f.get("admin"); v && !v->is_null()) c.admin = read_admin(*v);
  if (auto v = f.get("limits")) c.limits = read_limits(*v);
  if (auto v = f.get("naming")) c.naming = read_naming(*v);
  if (auto v = f.get("filters")) c.filters = read_filters(*v);
  if (auto v = f.get("chain")) c.chain = read_chain(*v);
  if (auto v = f.get("apps")) c.apps = read_apps(*v);
  if (auto v = f.get("welcome")) c.welcome = read_welcome(*v);
  if (auto v = f.get("sagas")) c.sagas = read_sagas(*v);
  if (auto v = f.get("audit")) c.audit = read_audit(*v);
  if (auto v = f.get("redact"); v && !v->is_null()) c.redact = read_redact(*v);
  if (auto v = f.get("cluster")) c.cluster = read_cluster(*v);
  if (auto v = f.get("tasks")) c.tasks = read_tasks(*v);
  if (auto v = f.get("telemetry")) c.telemetry = read_telemetry(*v);
  auto upstream_oauth = f.get("upstream_oauth");
  if (upstream_oauth) c.upstream_oauth = read_upstream_oauth(*upstream_oauth);
  OAuthSeen seen;
  if (auto v = f.get("servers")) {
    std::map<std::string, int> first_line;
    for (const Value& item : v->items()) c.servers.push_back(read_server(item, c.naming, c.auth, first_line, seen));
  }
  check_upstream_oauth(c, upstream_oauth, seen.first_code_grant);
  if (auto v = f.get("integrity")) c.integrity = read_integrity(*v, c.cluster.redis);
  if (auto v = f.get("plugins")) {
    for (const Value& item : v->items()) c.plugins.push_back(read_plugin(item));
  }
  if (auto v = f.get("policies")) c.policies = read_policies(*v, known_mode);
  f.read("instructions", c.instructions);
  f.read("shutdown_grace_ms", c.shutdown_grace_ms, 0);
  f.read("startup_wait_ms", c.startup_wait_ms, 0);
  return c;
}

}  // namespace

std::optional<std::string> process_env(const std::string& name) {
  if (const char* value = std::getenv(name.c_str())) return std::string(value);
  return std::nullopt;
}

namespace {

Result<Config> parse_text(const std::string& yaml_text, const std::string& source, EnvLookup env) {
  try {
    // One document only. yaml-cpp 0.7's LoadAll never returns on some
    // inputs after the first document (",;\n -ab\n": found by fuzz_config),
    // so the first is loaded alone and a second is found by its marker.
    Documents docs = count_documents(yaml_text);
    if (docs.count > 1) {
      return Error{source + ":" + std::to_string(docs.second_line) + ": invalid YAML: expected one document, found " +
                   std::to_string(docs.count)};
    }
    YAML::Node doc;
    try {
      doc = YAML::Load(yaml_text);
    } catch (const YAML::ParserException& e) {
      std::string line = e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1);
      return Error{source + line + ": invalid YAML: " + e.msg};
    }
    if (doc.IsNull() && docs.count > 0) {
      // Text that yaml-cpp reads as no value at all (",;\n -ab\n"), unlike
      // an empty file or a file of comments.
      return Error{source + ":" + std::to_string(docs.first_line) +
                   ": expected a mapping of settings at the top level, got text that is not YAML"};
    }
    if (!env) env = process_env;
    Context ctx{source, env, base_dir_of(source)};
    return read_config(Value(ctx, doc, "", 1), source);
  } catch (const Invalid& e) {
    return Error{e.message};
  } catch (const YAML::Exception& e) {
    return Error{source + ": invalid YAML: " + e.msg};
  } catch (const std::exception& e) {  // e.g. thrown by the caller's EnvLookup
    return Error{source + ": cannot load: " + e.what()};
  }
}

}  // namespace

Result<Config> parse(const std::string& yaml_text, const std::string& source, EnvLookup env) {
  auto r = parse_text(yaml_text, source, std::move(env));
  if (!r) return Error{one_line(r.error())};
  return r;
}

Result<Config> load(const std::string& path, EnvLookup env) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file) return Error{path + ": cannot read: " + std::strerror(errno)};
  std::string text;
  char buf[8192];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, file.get())) text.append(buf, n);
  if (std::ferror(file.get())) return Error{path + ": cannot read: " + std::strerror(errno)};
  return parse(text, path, std::move(env));
}

}  // namespace mcpgw::config
