/*
 * mcpgw/json.hpp: a small JSON value for plugin authors.
 *
 * Header-only and built on the C++20 standard library alone, so a plugin needs
 * nothing beyond plugin.h and this file to read the JSON text the gateway
 * hands it and to build the JSON text it returns. The parser is strict
 * (RFC 8259, well-formed UTF-8, bounded nesting) because that text may come
 * from remote servers.
 */
#ifndef MCPGW_JSON_HPP
#define MCPGW_JSON_HPP

#include <algorithm>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace mcpgw {

/// Thrown by Json::parse (the message gives the reason and the byte offset) and
/// by the mutating accessors when the value has the wrong type.
class JsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A JSON value with value semantics: copying deep-copies. Objects keep their
/// members in insertion order with unique keys; lookups are linear, which
/// suits the small documents plugins exchange.
class Json {
 public:
  /// The JSON type; integers and doubles are both Number.
  enum class Type { Null, Bool, Number, String, Array, Object };
  /// The elements of an array.
  using Array = std::vector<Json>;
  /// The members of an object, in insertion order, keys unique.
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() noexcept = default;                  ///< Null.
  Json(std::nullptr_t) noexcept {}            ///< Null.
  Json(bool b) noexcept : v_(b) {}            ///< A boolean.
  Json(double d) noexcept : v_(d) {}          ///< A double; NaN and infinities dump as null.
  Json(float f) noexcept : v_(double{f}) {}   ///< A float, widened to double.
  Json(std::string s) noexcept : v_(std::move(s)) {}  ///< A string.
  Json(std::string_view s) : v_(std::string(s)) {}    ///< A string.
  Json(Array a) noexcept : v_(std::move(a)) {}        ///< An array.
  /// A string; a null pointer gives null instead of undefined behaviour.
  Json(const char* s) {
    if (s) v_ = std::string(s);
  }
  /// An integer of any width, held exactly; unsigned values above INT64_MAX
  /// do not fit and become double.
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Json(T n) noexcept {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(std::int64_t)) {
      if (n > static_cast<std::uint64_t>(INT64_MAX)) {
        v_ = static_cast<double>(n);
        return;
      }
    }
    v_ = static_cast<std::int64_t>(n);
  }
  /// An object; of duplicate keys, the first position and the last value stay.
  Json(Object o) : v_(std::move(o)) { dedupe(std::get<Object>(v_)); }

  /// An array: Json::array({1, "x"}).
  static Json array(std::initializer_list<Json> items = {}) { return Json(Array(items)); }
  /// An object: Json::object({{"a", 1}}); a later duplicate key replaces an earlier one.
  static Json object(std::initializer_list<std::pair<std::string, Json>> members = {}) {
    return Json(Object(members));
  }

  /// The JSON type of the value.
  Type type() const noexcept {
    static constexpr Type kTypes[] = {Type::Null,   Type::Bool,  Type::Number, Type::Number,
                                      Type::String, Type::Array, Type::Object};
    // A variant left valueless by a failed assignment reads as null, as get_if does.
    const std::size_t i = v_.index();
    return i < std::size(kTypes) ? kTypes[i] : Type::Null;
  }
  bool is_null() const noexcept { return type() == Type::Null; }      ///< Whether null.
  bool is_bool() const noexcept { return type() == Type::Bool; }      ///< Whether a boolean.
  bool is_number() const noexcept { return type() == Type::Number; }  ///< Whether a number.
  /// Whether a number held exactly as an int64 (parsed without fraction or
  /// exponent, or constructed from an integer).
  bool is_integer() const noexcept { return get<std::int64_t>() != nullptr; }
  bool is_string() const noexcept { return type() == Type::String; }  ///< Whether a string.
  bool is_array() const noexcept { return type() == Type::Array; }    ///< Whether an array.
  bool is_object() const noexcept { return type() == Type::Object; }  ///< Whether an object.

  /// The boolean, or `def` for other types.
  bool as_bool(bool def = false) const noexcept { return get<bool>() ? *get<bool>() : def; }
  /// The number (integers converted), or `def` for other types.
  double as_number(double def = 0) const noexcept {
    if (const auto* i = get<std::int64_t>()) return static_cast<double>(*i);
    return get<double>() ? *get<double>() : def;
  }
  /// The integer, or a double with an integral value in range, or else `def`.
  std::int64_t as_int(std::int64_t def = 0) const noexcept {
    if (const auto* i = get<std::int64_t>()) return *i;
    return get<double>() ? exact_int(*get<double>()).value_or(def) : def;
  }
  /// The string, or `def` for other types.
  std::string as_string(std::string_view def = "") const {
    return get<std::string>() ? *get<std::string>() : std::string(def);
  }

  /// The member `key`, or null when it is missing or this is no object.
  const Json& operator[](std::string_view key) const {
    const Json* v = find(key);
    return v ? *v : null_ref();
  }
  /// The member `key`, inserted as null when missing; a null value becomes an
  /// empty object first. Throws JsonError on other types. Like any vector
  /// element, the reference dies with the next insertion into this object.
  Json& operator[](std::string_view key) {
    Object& m = object_for("operator[]");
    if (Json* v = find_mut(key)) return *v;
    return m.emplace_back(std::string(key), Json()).second;
  }
  /// As operator[](std::string_view) const; makes j["k"] unambiguous.
  const Json& operator[](const char* key) const { return (*this)[std::string_view(key)]; }
  /// As operator[](std::string_view); makes j["k"] unambiguous.
  Json& operator[](const char* key) { return (*this)[std::string_view(key)]; }
  /// As operator[](std::string_view) const.
  const Json& operator[](const std::string& key) const { return (*this)[std::string_view(key)]; }
  /// As operator[](std::string_view).
  Json& operator[](const std::string& key) { return (*this)[std::string_view(key)]; }
  /// Element `i`, or null when out of range or this is no array.
  const Json& operator[](std::size_t i) const {
    return i < items().size() ? items()[i] : null_ref();
  }
  /// Element `i`; negative indexes give null. Makes j[0] unambiguous.
  const Json& operator[](int i) const {
    return i < 0 ? null_ref() : (*this)[static_cast<std::size_t>(i)];
  }
  /// Read-only element access on a non-const value. Without these, the literal
  /// 0 in j[0] is a null pointer constant that ties with the non-const key
  /// overloads; use at() to modify an element.
  const Json& operator[](std::size_t i) { return std::as_const(*this)[i]; }
  /// See operator[](std::size_t).
  const Json& operator[](int i) { return std::as_const(*this)[i]; }
  /// Element `i`, modifiable; throws JsonError when this is no array or `i` is out of range.
  Json& at(std::size_t i) {
    auto* a = get<Array>();
    if (!a) throw JsonError("Json::at: not an array");
    if (i >= a->size()) throw JsonError("Json::at: index out of range");
    return (*a)[i];
  }

  /// The member `key`, or nullptr when it is missing or this is no object.
  const Json* find(std::string_view key) const noexcept {
    for (const auto& [k, v] : members())
      if (k == key) return &v;
    return nullptr;
  }
  /// Whether this is an object with member `key`.
  bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }
  /// The number of elements or members; 0 for other types.
  std::size_t size() const noexcept { return items().size() + members().size(); }
  /// Whether size() is 0.
  bool empty() const noexcept { return size() == 0; }

  /// Sets or replaces member `key`; a null value becomes an object first.
  /// Throws JsonError on other types.
  Json& set(std::string_view key, Json value) {
    Object& m = object_for("set");
    if (Json* v = find_mut(key))
      *v = std::move(value);
    else
      m.emplace_back(std::string(key), std::move(value));
    return *this;
  }
  /// Removes member `key`; false when there was none or this is no object.
  bool erase(std::string_view key) {
    auto* m = get<Object>();
    return m && std::erase_if(*m, [&](const auto& member) { return member.first == key; }) > 0;
  }
  /// Appends an element; a null value becomes an array first. Throws JsonError on other types.
  Json& push_back(Json value) {
    if (is_null()) v_ = Array{};
    auto* a = get<Array>();
    if (!a) throw JsonError("Json::push_back: not an array");
    a->push_back(std::move(value));
    return *this;
  }

  /// The elements, or an empty array for other types.
  const Array& items() const noexcept {
    static const Array kEmpty;
    return get<Array>() ? *get<Array>() : kEmpty;
  }
  /// The members, or an empty object for other types.
  const Object& members() const noexcept {
    static const Object kEmpty;
    return get<Object>() ? *get<Object>() : kEmpty;
  }

  /// Compact JSON text, members in insertion order.
  std::string dump() const { return dump(0); }
  /// Pretty JSON text with `indent` spaces per level; compact when indent <= 0.
  std::string dump(int indent) const {
    std::string out;
    write(out, std::max(indent, 0), 0);
    return out;
  }

  /// Parses one JSON document; throws JsonError "JSON parse error at byte N: reason".
  static Json parse(std::string_view text);
  /// Parses one JSON document; nullopt instead of an exception.
  static std::optional<Json> try_parse(std::string_view text) noexcept;

  /// Deep equality. Numbers compare by value (1 == 1.0) and objects as key sets.
  friend bool operator==(const Json& a, const Json& b) noexcept {
    if (a.type() != b.type()) return false;
    switch (a.type()) {
      case Type::Null: return true;
      case Type::Bool: return a.as_bool() == b.as_bool();
      case Type::String: return *a.get<std::string>() == *b.get<std::string>();
      case Type::Array: return a.items() == b.items();
      case Type::Number: {
        const auto* ai = a.get<std::int64_t>();
        const auto* bi = b.get<std::int64_t>();
        if (!ai && !bi) return a.as_number() == b.as_number();
        // Mixed kinds compare exactly: rounding the integer to double would
        // make INT64_MAX equal 2^63.
        const auto i = ai ? std::optional(*ai) : exact_int(a.as_number());
        const auto j = bi ? std::optional(*bi) : exact_int(b.as_number());
        return i && i == j;
      }
      case Type::Object:
        return a.size() == b.size() &&
               std::all_of(a.members().begin(), a.members().end(), [&](const auto& m) {
                 const Json* other = b.find(m.first);
                 return other && *other == m.second;
               });
    }
    return false;
  }

 private:
  class Parser;

  template <class T>
  const T* get() const noexcept { return std::get_if<T>(&v_); }
  template <class T>
  T* get() noexcept { return std::get_if<T>(&v_); }

  static const Json& null_ref() noexcept {
    static const Json kNull;
    return kNull;
  }

  // Only integral values in [-2^63, 2^63) convert, so the cast is defined.
  static std::optional<std::int64_t> exact_int(double d) noexcept {
    if (d >= -0x1p63 && d < 0x1p63 && std::trunc(d) == d) return static_cast<std::int64_t>(d);
    return std::nullopt;
  }

  Json* find_mut(std::string_view key) noexcept {
    return const_cast<Json*>(std::as_const(*this).find(key));
  }

  Object& object_for(const char* op) {
    if (is_null()) v_ = Object{};
    auto* m = get<Object>();
    if (!m) throw JsonError(std::string("Json::") + op + ": not an object");
    return *m;
  }

  // The characters after a backslash in escapes, and what they stand for.
  static constexpr std::string_view kEscapes = "\"\\/bfnrt";
  static constexpr std::string_view kUnescaped = "\"\\/\b\f\n\r\t";

  static void dedupe(Object& m);
  static void write_string(std::string& out, std::string_view s);
  void write(std::string& out, int indent, int level) const;

  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, Array, Object> v_;
};

inline void Json::dedupe(Object& m) {
  if (m.size() < 2) return;
  // Sorting indexes keeps this O(n log n) on hostile input with many keys; the
  // stable sort starts each key's run with its first occurrence.
  std::vector<std::size_t> order(m.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return m[a].first < m[b].first; });
  std::vector<bool> drop(m.size());
  bool any = false;
  for (std::size_t i = 1, head = order[0]; i < order.size(); ++i) {
    if (m[order[i]].first != m[head].first) {
      head = order[i];
      continue;
    }
    m[head].second = std::move(m[order[i]].second);
    drop[order[i]] = any = true;
  }
  if (!any) return;
  Object kept;
  for (std::size_t i = 0; i < m.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(m[i]));
  m = std::move(kept);
}

inline void Json::write_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    // '/' may stay raw; the parser accepts both forms.
    if (const auto k = kUnescaped.find(c); k != std::string_view::npos && c != '/') {
      out += '\\';
      out += kEscapes[k];
    } else if (u < 0x20) {
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    } else {
      out += c;
    }
  }
  out += '"';
}

inline void Json::write(std::string& out, int indent, int level) const {
  const auto newline = [&](int depth) {
    if (indent <= 0) return;
    out += '\n';
    out.append(static_cast<std::size_t>(indent) * static_cast<std::size_t>(depth), ' ');
  };
  const auto number = [&](auto n) {
    char buf[32];  // fits any int64 and the shortest form of any double
    out.append(buf, std::to_chars(buf, buf + sizeof buf, n).ptr);
  };
  switch (type()) {
    case Type::Null: out += "null"; break;
    case Type::Bool: out += as_bool() ? "true" : "false"; break;
    case Type::Number:
      if (const auto* i = get<std::int64_t>())
        number(*i);
      else if (std::isfinite(as_number()))
        number(as_number());
      else
        out += "null";  // JSON has no NaN or infinity
      break;
    case Type::String: write_string(out, *get<std::string>()); break;
    case Type::Array:
    case Type::Object: {
      const bool array = is_array();
      out += array ? '[' : '{';
      for (std::size_t i = 0; i < size(); ++i) {
        if (i > 0) out += ',';
        newline(level + 1);
        if (array) {
          items()[i].write(out, indent, level + 1);
        } else {
          write_string(out, members()[i].first);
          out += indent > 0 ? ": " : ":";
          members()[i].second.write(out, indent, level + 1);
        }
      }
      if (!empty()) newline(level);  // keeps [] and {} on one line
      out += array ? ']' : '}';
      break;
    }
  }
}

/// Strict RFC 8259 recursive-descent parser over untrusted bytes.
class Json::Parser {
 public:
  explicit Parser(std::string_view text) noexcept : s_(text) {}

  Json document() {
    Json v = value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  // Deeper than any real document, and shallow enough that hostile nesting
  // cannot exhaust the stack: the check runs before each recursion.
  static constexpr int kMaxDepth = 256;

  [[noreturn]] void fail(std::string_view reason) const {
    throw JsonError("JSON parse error at byte " + std::to_string(pos_) + ": " +
                    std::string(reason));
  }
  [[noreturn]] void fail_at(std::size_t at, std::string_view reason) {
    pos_ = at;
    fail(reason);
  }
  // '\0' stands for the end; an embedded NUL is invalid wherever peek() looks.
  char peek() const noexcept { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool accept(char c) noexcept {
    if (pos_ >= s_.size() || s_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  static bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
  void skip_ws() noexcept { pos_ = std::min(s_.find_first_not_of(" \t\n\r", pos_), s_.size()); }

  Json value(int depth) {
    skip_ws();
    switch (peek()) {
      case '{': return object(depth);
      case '[': return array(depth);
      case '"': return Json(string());
      case 't': return literal("true", Json(true));
      case 'f': return literal("false", Json(false));
      case 'n': return literal("null", Json());
      default:
        if (peek() == '-' || is_digit(peek())) return number();
        fail(pos_ < s_.size() ? "unexpected character" : "unexpected end of input");
    }
  }

  Json literal(std::string_view word, Json v) {
    if (s_.substr(pos_, word.size()) != word) fail("invalid literal");
    pos_ += word.size();
    return v;
  }

  // The comma-separated elements of an array or object, after the depth
  // check that bounds recursion; `element` parses one.
  template <class F>
  void elements(int depth, char close, F&& element) {
    if (depth >= kMaxDepth) fail("nested too deeply");
    ++pos_;
    skip_ws();
    if (accept(close)) return;
    do {
      element();
      skip_ws();
      if (accept(close)) return;
    } while (accept(','));
    fail(close == ']' ? "expected ',' or ']'" : "expected ',' or '}'");
  }

  Json array(int depth) {
    Array items;
    elements(depth, ']', [&] { items.push_back(value(depth + 1)); });
    return Json(std::move(items));
  }

  Json object(int depth) {
    Object members;
    elements(depth, '}', [&] {
      skip_ws();
      if (peek() != '"') fail("expected string key");
      std::string key = string();
      skip_ws();
      if (!accept(':')) fail("expected ':'");
      members.emplace_back(std::move(key), value(depth + 1));
    });
    return Json(std::move(members));  // the constructor drops duplicate keys, last one wins
  }

  std::string string() {
    ++pos_;
    std::string out;
    while (!accept('"')) {
      if (pos_ >= s_.size()) fail("unterminated string");
      const auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '\\') {
        escape(out);
        continue;
      }
      if (c < 0x20) fail("control character in string");
      const std::size_t n = c < 0x80 ? 1 : utf8_length();
      if (n == 0) fail("invalid UTF-8");
      out.append(s_.substr(pos_, n));
      pos_ += n;
    }
    return out;
  }

  // Length of the well-formed multi-byte sequence at pos_, or 0. The second
  // byte's range excludes overlongs (E0, F0), UTF-16 surrogates (ED) and code
  // points above U+10FFFF (F4), as in Unicode's table of well-formed UTF-8.
  std::size_t utf8_length() const noexcept {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s_[pos_ + i]); };
    const unsigned char lead = b(0);
    const std::size_t n = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    const unsigned char lo = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
    const unsigned char hi = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
    if (lead < 0xC2 || lead > 0xF4 || s_.size() - pos_ < n || b(1) < lo || b(1) > hi) return 0;
    for (std::size_t i = 2; i < n; ++i)
      if ((b(i) & 0xC0) != 0x80) return 0;
    return n;
  }

  void escape(std::string& out) {
    const std::size_t start = pos_;
    pos_ += 2;
    const char e = start + 1 < s_.size() ? s_[start + 1] : '\0';
    if (const auto k = kEscapes.find(e); k != std::string_view::npos) {
      out += kUnescaped[k];
      return;
    }
    if (e != 'u') fail_at(start, "invalid escape");
    std::uint32_t cp = hex4();
    if (cp >= 0xD800 && cp <= 0xDBFF && s_.substr(pos_, 2) == "\\u") {
      pos_ += 2;
      const std::uint32_t low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) fail_at(start, "unpaired surrogate");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
      fail_at(start, "unpaired surrogate");
    }
    append_utf8(out, cp);
  }

  std::uint32_t hex4() {
    std::uint32_t v = 0;
    const char* p = s_.data() + pos_;
    // Unsigned from_chars takes no sign, so only four hex digits pass.
    if (s_.size() - pos_ < 4 || std::from_chars(p, p + 4, v, 16).ptr != p + 4)
      fail("invalid \\u escape");
    pos_ += 4;
    return v;
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
      return;
    }
    static constexpr std::uint32_t kLead[] = {0, 0, 0xC0, 0xE0, 0xF0};
    const int n = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    out += static_cast<char>(kLead[n] | (cp >> (6 * (n - 1))));
    for (int i = n - 2; i >= 0; --i) out += static_cast<char>(0x80 | ((cp >> (6 * i)) & 0x3F));
  }

  void digits(std::string_view reason) {
    if (!is_digit(peek())) fail(reason);
    while (is_digit(peek())) ++pos_;
  }

  Json number() {
    const std::size_t start = pos_;
    accept('-');
    if (!accept('0'))
      digits("invalid number");
    else if (is_digit(peek()))
      fail("leading zero");
    const bool fraction = accept('.');
    if (fraction) digits("digit expected after '.'");
    const bool exponent = accept('e') || accept('E');
    if (exponent) {
      if (!accept('+')) accept('-');
      digits("digit expected in exponent");
    }
    const char* first = s_.data() + start;
    const char* last = s_.data() + pos_;
    // Integers beyond int64 fall through to double, like 2^63.
    std::int64_t i = 0;
    if (!fraction && !exponent && std::from_chars(first, last, i).ec == std::errc{}) return Json(i);
    double d = 0;
    if (std::from_chars(first, last, d).ec != std::errc{}) fail_at(start, "number out of range");
    return Json(d);
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

inline Json Json::parse(std::string_view text) { return Parser(text).document(); }

inline std::optional<Json> Json::try_parse(std::string_view text) noexcept {
  try {
    return parse(text);
  } catch (...) {  // allocation failure on hostile input is a failed parse too
    return std::nullopt;
  }
}

}  // namespace mcpgw

#endif  // MCPGW_JSON_HPP
