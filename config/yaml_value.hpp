#pragma once
// How the configuration loader reads YAML: a node with its key path and
// line for messages (Value), the checked keys of a fixed-schema mapping
// (Fields), ${VAR} interpolation, and the checks on the raw text that
// yaml-cpp does not make. Internal to config/: nothing else includes it.
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
#include <span>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "config/paths.hpp"

namespace mcpgw::config::yaml {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// Thrown by the readers below and caught in parse(), never beyond: it keeps
// the per-key code linear instead of checking a Result after every field.
struct Invalid {
  std::string message;
};

/// A value shown in a one-line message: quoted, escaped, truncated.
std::string quote(std::string_view s);
/// Levenshtein distance (for "did you mean").
std::size_t edit_distance(std::string_view a, std::string_view b);
/// [A-Za-z0-9_-]+
bool is_identifier(std::string_view s);
/// [A-Za-z_][A-Za-z0-9_]*
bool is_env_name(std::string_view s);
/// YAML 1.2 core schema spellings.
bool is_true(std::string_view s);
bool is_false(std::string_view s);
bool is_null_word(std::string_view s);
/// Decimal integer with an optional sign; nullopt for anything else.
std::optional<long long> to_integer(std::string_view s, bool* overflow = nullptr);
/// Finite decimal float (YAML core: `1.5`, `.5`, `-2e3`); no inf/nan/hex.
std::optional<double> to_float(std::string_view s);
/// `v` as the shortest decimal text that reads back as it (1, 0.5).
std::string format_number(double v);

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

  /// A decimal number from `lo` to `hi`.
  double number(double lo, double hi) const {
    std::string s = scalar_for("a number");
    auto v = to_float(s);
    if (!v) fail("expected a number, got " + quote(s));
    if (*v < lo || *v > hi) fail("expected a number from " + format_number(lo) + " to " + format_number(hi) + ", got " + s);
    return *v;
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

  /// A mapping with a fixed set of keys (one of config/keys.hpp); anything
  /// else is reported.
  Fields fields(std::span<const std::string_view> known) const;

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


/// The keys of a fixed-schema mapping, checked against the known ones.
class Fields {
 public:
  Fields(const Value& map, std::span<const std::string_view> known) : map_(map) {
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


/// Where the second YAML document of `text` starts (1-based line; 0 = there
/// is none) and how many documents there are.
struct Documents {
  int first_line = 0;   ///< of the first node
  int second_line = 0;  ///< of the second document's first node
  int count = 0;
};
Documents count_documents(std::string_view text);

/// An error as one line: control characters written as \xNN.
std::string one_line(const std::string& msg);

}  // namespace mcpgw::config::yaml
