#include "config/yaml_value.hpp"

namespace mcpgw::config::yaml {

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
std::optional<long long> to_integer(std::string_view s, bool* overflow) {
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


std::string format_number(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

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


Fields Value::fields(std::span<const std::string_view> known) const { return Fields(*this, known); }

/// Where the second YAML document of `text` starts (1-based line; 0 = there
/// is none) and how many documents there are. A document after the first
/// needs a marker at column 0 (YAML 1.2, 9.2): `---` after content, or
/// content after `...`; no scalar may hold one there.
Documents count_documents(std::string_view text) {
  Documents d;
  bool content = false;
  int line = 0;
  // The second document is reported where its first node is, as yaml-cpp
  // reports any other error; at its marker when it is empty.
  int marker_line = 0;
  auto start = [&] {
    if (++d.count == 2) marker_line = line;
  };
  auto node = [&] {
    if (d.count == 1 && !d.first_line) d.first_line = line;
    if (d.count == 2 && !d.second_line) d.second_line = line;
  };
  for (std::size_t pos = 0; pos <= text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    ++line;
    pos = end + 1;
    auto marker = [&](std::string_view m) {
      return l.starts_with(m) && (l.size() == 3 || l[3] == ' ' || l[3] == '\t');
    };
    if (marker("---")) {
      start();  // an explicit start: what follows belongs to a new document
      content = true;
      std::size_t rest = l.find_first_not_of(" \t", 3);
      if (rest != std::string_view::npos && l[rest] != '#') node();
      continue;
    }
    if (marker("...")) {
      content = false;
      continue;
    }
    std::size_t first = l.find_first_not_of(" \t");
    bool blank = first == std::string_view::npos || l[first] == '#';
    if (blank || (!content && l.starts_with('%'))) continue;  // comments; directives before a document
    if (!content) start();
    content = true;
    node();
  }
  if (d.count > 1 && !d.second_line) d.second_line = marker_line;
  return d;
}

/// An error is one line whatever the file holds: yaml-cpp's messages quote
/// the offending character as is, and key paths hold the keys as written,
/// so a control character (a newline, a NUL) is written as \xNN.
std::string one_line(const std::string& msg) {
  std::string out;
  for (char c : msg) {
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    }
  }
  return out;
}


}  // namespace mcpgw::config::yaml
