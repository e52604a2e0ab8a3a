#include "config/config.hpp"

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

#include "config/paths.hpp"

namespace mcpgw::config {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// Thrown by the readers below and caught in parse(), never beyond: it keeps
// the per-key code linear instead of checking a Result after every field.
struct Invalid {
  std::string message;
};

/// A value shown in a one-line message: quoted, escaped, truncated.
std::string quote(std::string_view s) {
  constexpr std::size_t kMax = 80;
  std::string out = "\"";
  for (char c : s.substr(0, kMax)) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  if (s.size() > kMax) out += "...";
  return out + "\"";
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

bool is_identifier(std::string_view s) {  // [A-Za-z0-9_-]+
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool is_env_name(std::string_view s) {  // [A-Za-z_][A-Za-z0-9_]*
  return !s.empty() && !(s[0] >= '0' && s[0] <= '9') && s.find('-') == std::string_view::npos &&
         is_identifier(s);
}

// YAML 1.2 core schema spellings.
bool is_true(std::string_view s) { return s == "true" || s == "True" || s == "TRUE"; }
bool is_false(std::string_view s) { return s == "false" || s == "False" || s == "FALSE"; }
bool is_null_word(std::string_view s) { return s == "~" || s == "null" || s == "Null" || s == "NULL"; }

/// Decimal integer with an optional sign; nullopt for anything else.
std::optional<long long> to_integer(std::string_view s, bool* overflow = nullptr) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return std::nullopt;
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (end != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range && overflow) *overflow = true;
  if (ec != std::errc()) return std::nullopt;
  return v;
}

/// Finite decimal float (YAML core: `1.5`, `.5`, `-2e3`); no inf/nan/hex.
std::optional<double> to_float(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+' || s.find_first_not_of("0123456789.eE+-") != std::string_view::npos)
    return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

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

struct Context {
  const std::string& source;
  const EnvLookup& env;
  std::string base_dir;  // the file's directory: relative paths in it start here
};

class Fields;
struct Entry;

/// A YAML node together with what messages need: its key path and line.
class Value {
 public:
  Value(const Context& ctx, YAML::Node node, std::string path, int line)
      : ctx_(&ctx), node_(std::move(node)), path_(std::move(path)), line_(line) {}

  int line() const { return line_; }
  bool is_null() const { return node_.IsNull(); }
  bool is_list() const { return node_.IsSequence(); }
  bool is_map() const { return node_.IsMap(); }

  [[noreturn]] void fail(std::string_view what) const {
    std::string msg = ctx_->source + ":" + std::to_string(line_) + ": ";
    if (!path_.empty()) msg += path_ + ": ";
    throw Invalid{msg.append(what)};
  }

  /// What was found, for "expected X, got Y".
  std::string found() const {
    if (node_.IsSequence()) return "a list";
    if (node_.IsMap()) return "a mapping";
    if (node_.IsScalar()) return quote(node_.Scalar());
    return "null";
  }

  /// A string scalar after ${VAR} interpolation; null reads as "".
  std::string text() const {
    if (is_null()) return {};
    if (!node_.IsScalar()) fail("expected a string, got " + found());
    return interpolate(node_.Scalar());
  }

  /// A file the configuration names (after interpolation), absolute:
  /// relative to the file's directory (resolve_path). Null reads as "".
  std::string path() const { return resolve_path(ctx_->base_dir, text()); }

  /// A command or shared library: with a slash, a path(); without, left
  /// for the search at start (PATH, ld.so).
  std::string program() const { return resolve_command(ctx_->base_dir, non_empty_text()); }

  const std::string& base_dir() const { return ctx_->base_dir; }

  std::string non_empty_text() const {
    std::string s = text();
    if (s.empty()) fail("must not be empty");
    return s;
  }

  bool boolean() const {
    std::string s = scalar_for("true or false");
    if (is_true(s)) return true;
    if (is_false(s)) return false;
    fail("expected true or false, got " + quote(s));
  }

  int integer(int lo, int hi = INT_MAX) const {
    std::string s = scalar_for("an integer");
    bool overflow = false;
    auto v = to_integer(s, &overflow);
    if (!v && !overflow) fail("expected an integer, got " + quote(s));
    if (!v || *v < lo || *v > hi) {
      fail(hi == INT_MAX ? "expected an integer >= " + std::to_string(lo) + ", got " + s
                         : "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                               ", got " + s);
    }
    return static_cast<int>(*v);
  }

  template <typename E>
  E one_of(std::initializer_list<std::pair<std::string_view, E>> choices) const {
    std::string s = text();
    std::string names;
    for (const auto& [name, value] : choices) {
      if (name == s) return value;
      names += (names.empty() ? "" : " | ") + std::string(name);
    }
    fail("expected " + names + ", got " + quote(s));
  }

  /// List items; null reads as an empty list.
  std::vector<Value> items() const {
    if (is_null()) return {};
    if (!is_list()) fail("expected a list, got " + found());
    std::vector<Value> out;
    for (const YAML::Node& item : node_) {
      out.push_back(child(item, path_ + "[" + std::to_string(out.size()) + "]", YAML::Node()));
    }
    return out;
  }

  std::vector<std::string> strings() const {
    std::vector<std::string> out;
    for (const Value& item : items()) out.push_back(item.text());
    return out;
  }

  /// Entries of a free-form mapping (env, headers, slices, modes, JSON), in
  /// file order, keys interpolated; null reads as an empty mapping.
  std::vector<Entry> entries() const;

  std::vector<std::pair<std::string, std::string>> string_map() const;

  /// A mapping with a fixed set of keys; anything else is reported.
  Fields fields(std::initializer_list<std::string_view> known) const;

  /// Compact JSON text of this node.
  std::string json() const {
    rapidjson::StringBuffer buffer;
    JsonWriter writer(buffer);
    write_json(writer);
    return {buffer.GetString(), buffer.GetSize()};
  }

 private:
  friend class Fields;

  std::string join(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  // A null value has no position of its own (yaml-cpp marks the next token,
  // or nothing), so it is reported on its key's line, or else its parent's.
  Value child(const YAML::Node& node, std::string path, const YAML::Node& key) const {
    const YAML::Node& at = node.IsNull() && key.IsDefined() ? key : node;
    int line = at.Mark().is_null() ? line_ : at.Mark().line + 1;
    return Value(*ctx_, node, std::move(path), line);
  }

  Value key_value(const YAML::Node& key) const {
    Value v(*ctx_, key, path_, std::max(1, key.Mark().line + 1));
    if (!key.IsScalar()) v.fail("expected a string key, got " + v.found());
    return v;
  }

  std::string scalar_for(std::string_view expected) const {
    if (!node_.IsScalar()) fail("expected " + std::string(expected) + ", got " + found());
    return interpolate(node_.Scalar());
  }

  std::string interpolate(std::string_view s) const {
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
      if (s[i] != '$' || i + 1 >= s.size() || s[i + 1] != '{') {
        out += s[i++];
        continue;
      }
      std::size_t close = s.find('}', i + 2);
      if (close == std::string_view::npos) fail("unterminated \"${\" in " + quote(s));
      std::string_view inner = s.substr(i + 2, close - i - 2);
      std::size_t dash = inner.find(":-");
      std::string name(inner.substr(0, dash));
      if (!is_env_name(name)) fail("invalid variable reference " + quote(s.substr(i, close - i + 1)));
      std::optional<std::string> value = ctx_->env(name);
      // Like the shell, ${NAME:-default} also applies the default to an empty value.
      if (value && (dash == std::string_view::npos || !value->empty())) {
        out += *value;
      } else if (dash != std::string_view::npos) {
        out += inner.substr(dash + 2);
      } else {
        fail("environment variable " + name + " is not set");
      }
      i = close + 1;
    }
    return out;
  }

  void write_json(JsonWriter& w) const;

  const Context* ctx_;
  YAML::Node node_;
  std::string path_;
  int line_;
};

struct Entry {
  Value key;  // the key node: its path is the entry's, its line the key's
  Value value;
  std::string name;  // the key, interpolated
};

std::vector<Entry> Value::entries() const {
  if (is_null()) return {};
  if (!is_map()) fail("expected a mapping, got " + found());
  std::vector<Entry> out;
  for (const auto& kv : node_) {
    Value key = key_value(kv.first);
    std::string name = key.text();
    key.path_ = join(name);
    for (const Entry& seen : out) {
      if (seen.name == name) {
        key.fail("duplicate key " + quote(name) + " (first defined at line " +
                 std::to_string(seen.key.line_) + ")");
      }
    }
    Value value = child(kv.second, key.path_, kv.first);
    out.push_back(Entry{std::move(key), std::move(value), std::move(name)});
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> Value::string_map() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Entry& e : entries()) out.emplace_back(e.name, e.value.text());
  return out;
}

void Value::write_json(JsonWriter& w) const {
  if (is_list()) {
    w.StartArray();
    for (const Value& item : items()) item.write_json(w);
    w.EndArray();
  } else if (is_map()) {
    w.StartObject();
    for (const Entry& e : entries()) {
      w.Key(e.name.data(), static_cast<rapidjson::SizeType>(e.name.size()), true);
      e.value.write_json(w);
    }
    w.EndObject();
  } else if (!node_.IsScalar()) {
    w.Null();
  } else {
    std::string s = interpolate(node_.Scalar());
    // Only a plain scalar may be a number, bool or null; quoted and
    // explicitly tagged ones stay strings, as the author wrote them.
    bool plain = node_.Tag() == "?";
    if (plain && is_null_word(s)) {
      w.Null();
    } else if (plain && (is_true(s) || is_false(s))) {
      w.Bool(is_true(s));
    } else if (auto i = plain ? to_integer(s) : std::nullopt) {
      w.Int64(*i);
    } else if (auto d = plain ? to_float(s) : std::nullopt) {
      w.Double(*d);
    } else {
      w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()), true);
    }
  }
}

/// The keys of a fixed-schema mapping, checked against the known ones.
class Fields {
 public:
  Fields(const Value& map, std::initializer_list<std::string_view> known) : map_(map) {
    if (map.is_null()) return;
    if (!map.is_map()) map.fail("expected a mapping, got " + map.found());
    for (const auto& kv : map.node_) {
      Value key = map.key_value(kv.first);
      const std::string& name = kv.first.Scalar();
      key.path_ = map.join(name);
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string msg = "unknown key " + quote(name);
        std::string_view best;
        std::size_t best_distance = 3;
        for (std::string_view k : known) {
          std::size_t d = edit_distance(name, k);
          // A dropped unit suffix ("timeout" for "timeout_ms") is close too.
          if (name.size() >= 4 && k.starts_with(name)) d = std::min<std::size_t>(d, 2);
          if (d < best_distance) {
            best = k;
            best_distance = d;
          }
        }
        if (!best.empty()) msg += " (did you mean \"" + std::string(best) + "\"?)";
        key.fail(msg);
      }
      for (const auto& [seen, value] : present_) {
        if (seen == name) {
          key.fail("duplicate key " + quote(name) + " (first defined at line " + std::to_string(value.first) +
                   ")");
        }
      }
      present_.emplace_back(name, std::pair{key.line_, map.child(kv.second, key.path_, kv.first)});
    }
  }

  std::optional<Value> get(std::string_view key) const {
    for (const auto& [name, value] : present_) {
      if (name == key) return value.second;
    }
    return std::nullopt;
  }

  Value required(std::string_view key) const {
    if (auto v = get(key)) return *v;
    Value missing = map_;
    missing.path_ = map_.join(key);
    missing.fail("required key is missing");
  }

  /// Reads a key that names a file (Value::path).
  void read_path(std::string_view key, std::string& out) const {
    if (auto v = get(key)) out = v->path();
  }
  void read(std::string_view key, std::string& out) const {
    if (auto v = get(key)) out = v->text();
  }
  void read(std::string_view key, bool& out) const {
    if (auto v = get(key)) out = v->boolean();
  }
  void read(std::string_view key, int& out, int lo, int hi = INT_MAX) const {
    if (auto v = get(key)) out = v->integer(lo, hi);
  }
  void read(std::string_view key, std::vector<std::string>& out) const {
    if (auto v = get(key)) out = v->strings();
  }

 private:
  Value map_;
  // key -> (line of the key, value), in file order.
  std::vector<std::pair<std::string, std::pair<int, Value>>> present_;
};

Fields Value::fields(std::initializer_list<std::string_view> known) const { return Fields(*this, known); }

void read_filters(const Fields& f, Filters& out) {
  f.read("include_slices", out.include_slices);
  f.read("exclude_slices", out.exclude_slices);
  f.read("include_tools", out.include_tools);
  f.read("exclude_tools", out.exclude_tools);
}

Filters read_filters(const Value& v) {
  Filters out;
  read_filters(v.fields({"include_slices", "exclude_slices", "include_tools", "exclude_tools"}), out);
  return out;
}

using ModeCheck = std::function<bool(const std::string&)>;

Listen read_listen(const Value& v, bool auth_enabled) {
  Listen l;
  Fields f = v.fields({"host", "port", "path", "allowed_origins", "allowed_hosts", "max_body_bytes",
                       "heartbeat_ms", "page_size", "session_idle_s"});
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
  return l;
}

Auth read_auth(const Value& v, const ModeCheck& known_mode) {
  Auth a;
  auto tokens = v.fields({"bearer_tokens"}).get("bearer_tokens");
  if (!tokens) return a;  // `auth: {}` is the same as no `auth`
  std::vector<Value> items = tokens->items();
  // An empty list would lock every client out; say so rather than guess.
  if (items.empty()) tokens->fail("expected at least one token (remove \"auth\" to turn authentication off)");
  for (std::size_t i = 0; i < items.size(); ++i) {
    Fields f = items[i].fields({"token", "name", "modes"});
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
  Fields f = v.fields({"separator", "description_prefix", "max_length"});
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

std::vector<Mode> read_modes(const Value& v) {
  std::vector<Mode> modes;
  for (const Entry& e : v.entries()) {
    if (!is_identifier(e.name)) e.key.fail("expected a mode name of [A-Za-z0-9_-]+, got " + quote(e.name));
    if (e.name == "all") e.key.fail("a mode may not be named \"all\" (it means every tool)");
    Fields f =
        e.value.fields({"description", "include_slices", "exclude_slices", "include_tools", "exclude_tools"});
    Mode m;
    m.name = e.name;
    f.read("description", m.description);
    read_filters(f, m.filters);
    modes.push_back(std::move(m));
  }
  return modes;
}

Chain read_chain(const Value& v) {
  Chain c;
  Fields f = v.fields({"resolve", "max_depth", "merge"});
  f.read("resolve", c.resolve);
  f.read("max_depth", c.max_depth, 1);
  if (auto m = f.get("merge"))
    c.merge = m->one_of<Chain::Merge>({{"all", Chain::Merge::All}, {"last", Chain::Merge::Last}});
  return c;
}

Welcome read_welcome(const Value& v) {
  using S = Welcome::Strategy;
  Welcome w;
  Fields f = v.fields({"strategy", "tool", "arguments", "timeout_ms"});
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
  Fields f = v.fields({"secret", "ttl_s"});
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

Server read_server(const Value& v, const Naming& naming, std::map<std::string, int>& first_line) {
  using T = Server::Transport;
  Server s;
  Fields f = v.fields({"name", "transport", "command", "args", "env", "cwd", "url", "headers",
                       "forward_headers", "proxy_tools", "prefix", "slices", "filters", "welcome_priority",
                       "timeout_ms", "session", "required"});
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
  return s;
}

Plugin read_plugin(const Value& v) {
  Plugin p;
  Fields f = v.fields({"path", "config"});
  p.path = f.required("path").program();
  if (auto config = f.get("config"); config && !config->is_null()) {
    if (!config->is_map()) config->fail("expected a mapping (handed to the plugin as a JSON object), got " + config->found());
    p.config_json = config->json();
  }
  return p;
}

Config read_config(const Value& root, const std::string& source) {
  if (root.is_null()) root.fail("the file is empty (expected a mapping of settings)");
  if (!root.is_map()) root.fail("expected a mapping of settings at the top level, got " + root.found());
  Fields f = root.fields({"listen", "auth", "naming", "filters", "modes", "default_mode", "chain", "welcome",
                          "sagas", "servers", "plugins", "instructions", "shutdown_grace_ms"});
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
  if (auto v = f.get("auth")) c.auth = read_auth(*v, known_mode);
  if (auto v = f.get("listen")) c.listen = read_listen(*v, c.auth.enabled);
  if (auto v = f.get("naming")) c.naming = read_naming(*v);
  if (auto v = f.get("filters")) c.filters = read_filters(*v);
  if (auto v = f.get("chain")) c.chain = read_chain(*v);
  if (auto v = f.get("welcome")) c.welcome = read_welcome(*v);
  if (auto v = f.get("sagas")) c.sagas = read_sagas(*v);
  if (auto v = f.get("servers")) {
    std::map<std::string, int> first_line;
    for (const Value& item : v->items()) c.servers.push_back(read_server(item, c.naming, first_line));
  }
  if (auto v = f.get("plugins")) {
    for (const Value& item : v->items()) c.plugins.push_back(read_plugin(item));
  }
  f.read("instructions", c.instructions);
  f.read("shutdown_grace_ms", c.shutdown_grace_ms, 0);
  return c;
}

}  // namespace

std::optional<std::string> process_env(const std::string& name) {
  if (const char* value = std::getenv(name.c_str())) return std::string(value);
  return std::nullopt;
}

Result<Config> parse(const std::string& yaml_text, const std::string& source, EnvLookup env) {
  try {
    std::vector<YAML::Node> docs;
    try {
      docs = YAML::LoadAll(yaml_text);
    } catch (const YAML::ParserException& e) {
      std::string line = e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1);
      return Error{source + line + ": invalid YAML: " + e.msg};
    }
    if (docs.size() > 1) {
      return Error{source + ":" + std::to_string(docs[1].Mark().line + 1) +
                   ": invalid YAML: expected one document, found " + std::to_string(docs.size())};
    }
    if (!env) env = process_env;
    Context ctx{source, env, base_dir_of(source)};
    return read_config(Value(ctx, docs.empty() ? YAML::Node() : docs[0], "", 1), source);
  } catch (const Invalid& e) {
    return Error{e.message};
  } catch (const YAML::Exception& e) {
    return Error{source + ": invalid YAML: " + e.msg};
  } catch (const std::exception& e) {  // e.g. thrown by the caller's EnvLookup
    return Error{source + ": cannot load: " + e.what()};
  }
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
