#include "jsonrpc/scan.hpp"

#include <cstdint>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "util/utf8.hpp"

namespace mcpgw::jsonrpc {
namespace {

/// Where a key is, which decides what the scan notes about it.
enum class Place { Other, Result, Meta, Params };

/// A strict single-pass JSON reader that builds nothing. Every method
/// returns false on anything the relay must not pass on as it is.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  std::optional<ScannedResponse> response() {
    ScannedResponse out;
    bool version = false, id = false, result = false;
    ws();
    const bool read = peek() == '{' && members([&](std::string_view key) {
      const char* start = p_;
      if (key == "jsonrpc") {
        std::string_view v;
        if (version || !string(&v, false) || v != "2.0") return false;
        version = true;
      } else if (key == "id") {
        if (id || !(peek() == '"' ? string(nullptr, false) : number())) return false;
        out.id = {start, static_cast<std::size_t>(p_ - start)};
        id = true;
      } else if (key == "result") {
        line_break_ = false;
        if (result || peek() != '{' || !object(1, Place::Result)) return false;
        // Whitespace may hold line breaks; relayed, they would end the
        // line (stdio) or the event (SSE) the result goes out in.
        if (line_break_) return false;
        out.result = {start, static_cast<std::size_t>(p_ - start)};
        result = true;
      } else {
        return false;  // "error", "method" or a member of no response
      }
      return true;
    });
    if (!read) return std::nullopt;
    ws();
    if (p_ != end_ || !version || !id || !result) return std::nullopt;
    out.facts = facts_;
    return out;
  }

  /// The `params.arguments` object of the request in the text.
  std::optional<std::string_view> request_arguments() {
    bool params = false;
    ws();
    const bool read = peek() == '{' && members([&](std::string_view key) {
      if (key != "params") return value(0);
      if (params || peek() != '{' || !object(1, Place::Params)) return false;
      params = true;
      return true;
    });
    if (!read) return std::nullopt;
    ws();
    if (p_ != end_ || !arguments_.data()) return std::nullopt;
    return arguments_;
  }

 private:
  char peek() const { return p_ < end_ ? *p_ : '\0'; }
  bool eat(char c) {
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  void ws() {
    for (; p_ < end_; ++p_) {
      if (*p_ == '\n' || *p_ == '\r') line_break_ = true;
      else if (*p_ != ' ' && *p_ != '\t') return;
    }
  }
  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0)
      return false;
    p_ += word.size();
    return true;
  }

  bool value(int depth) {
    switch (peek()) {
      case '{': return object(depth + 1, Place::Other);
      case '[': return array(depth + 1);
      case '"': return string(nullptr, false);
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }

  bool object(int depth, Place place) {
    if (depth > kMaxScanDepth) return false;
    return members([&](std::string_view key) {
      if (key == "uri" || key == "resourceUri" || key == "ui/resourceUri") facts_.uri = true;
      // The first "isError" decides, as the DOM path's lookup finds it.
      if (place == Place::Result && key == "isError" && !seen_is_error_) {
        seen_is_error_ = true;
        facts_.is_error = literal("true");
        return facts_.is_error || value(depth);
      }
      if (place == Place::Result && key == "_meta" && peek() == '{') return object(depth + 1, Place::Meta);
      if (place == Place::Params && key == "arguments") {
        // Only an object, and only once: a duplicate leaves the DOM path
        // to say which one counts.
        if (arguments_.data() || peek() != '{') return false;
        const char* start = p_;
        line_break_ = false;
        if (!object(depth + 1, Place::Other) || line_break_) return false;
        arguments_ = {start, static_cast<std::size_t>(p_ - start)};
        return true;
      }
      if (place == Place::Result && key == "resultType") facts_.result_type = true;
      if (place == Place::Meta && key == "nextTool") facts_.next_tool = true;
      return value(depth);
    });
  }

  /// Reads an object from its `{`, handing each member's key to `member`,
  /// which reads the member's value (false: the scan fails).
  template <typename Member>
  bool members(Member&& member) {
    ++p_;  // '{'
    ws();
    if (eat('}')) return true;
    do {
      ws();
      std::string_view key;
      if (!string(&key, true)) return false;
      ws();
      if (!eat(':')) return false;
      ws();
      if (!member(key)) return false;
      ws();
    } while (eat(','));
    return eat('}');
  }

  bool array(int depth) {
    if (depth > kMaxScanDepth) return false;
    ++p_;  // '['
    ws();
    if (eat(']')) return true;
    do {
      ws();
      if (!value(depth)) return false;
      ws();
    } while (eat(','));
    return eat(']');
  }

  /// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?, whose value a
  /// double holds as a finite number (a larger one the DOM path writes as
  /// null): the digits before the point plus the exponent stay under 300.
  bool number() {
    eat('-');
    const char* digits = p_;
    if (eat('0')) {
      if (peek() >= '0' && peek() <= '9') return false;
    } else {
      if (!(peek() >= '1' && peek() <= '9')) return false;
      while (peek() >= '0' && peek() <= '9') ++p_;
    }
    long magnitude = p_ - digits;
    if (eat('.')) {
      if (!(peek() >= '0' && peek() <= '9')) return false;
      while (peek() >= '0' && peek() <= '9') ++p_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++p_;
      bool negative = peek() == '-';
      if (peek() == '+' || peek() == '-') ++p_;
      if (!(peek() >= '0' && peek() <= '9')) return false;
      long exponent = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (exponent < 100000) exponent = exponent * 10 + (*p_ - '0');
        ++p_;
      }
      if (!negative) magnitude += exponent;
    }
    return magnitude < 300;
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  /// The code unit of the `\u` escape at p_ (after its backslash: `u` and
  /// four hex digits), or -1.
  int code_unit() {
    if (end_ - p_ < 5 || *p_ != 'u') return -1;
    int v = 0;
    for (int i = 1; i <= 4; ++i) {
      int h = hex(p_[i]);
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    p_ += 5;
    return v;
  }
  bool escape() {
    ++p_;  // the backslash
    switch (peek()) {
      case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': ++p_; return true;
      default: break;
    }
    int unit = code_unit();
    if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return false;
    if (unit < 0xD800 || unit > 0xDBFF) return true;
    // A high surrogate must be followed by its low one.
    if (!eat('\\')) return false;
    int low = code_unit();
    return low >= 0xDC00 && low <= 0xDFFF;
  }

  /// A string; its contents (between the quotes) in `*contents` when
  /// asked. A key (`key`) must be written without escapes.
  bool string(std::string_view* contents, bool key) {
    if (!eat('"')) return false;
    const char* start = p_;
    bool ascii = true;
    for (;;) {
      // Many bytes at a time while none is a quote, a backslash, a control
      // character or part of a multi-byte character: long text and base64
      // pass at memory speed.
#ifdef __SSE2__
      // Sixteen: as signed bytes, both control characters and those of
      // multi-byte characters are less than 0x20.
      const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
      while (end_ - p_ >= 16) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p_));
        const __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, slash)),
                                             _mm_cmplt_epi8(x, space));
        if (const int mask = _mm_movemask_epi8(special)) {
          p_ += __builtin_ctz(static_cast<unsigned>(mask));
          break;
        }
        p_ += 16;
      }
#endif
      while (end_ - p_ >= 8) {
        std::uint64_t x;
        std::memcpy(&x, p_, 8);
        constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
        std::uint64_t quote = x ^ (ones * '"'), slash = x ^ (ones * '\\');
        std::uint64_t special = ((quote - ones) & ~quote) | ((slash - ones) & ~slash) | (x - ones * 0x20) | x;
        if (special & highs) break;
        p_ += 8;
      }
      if (p_ >= end_) return false;
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') break;
      if (c < 0x20) return false;
      if (c == '\\') {
        if (key || !escape()) return false;
        continue;
      }
      if (c >= 0x80) ascii = false;
      ++p_;
    }
    std::string_view inside(start, static_cast<std::size_t>(p_ - start));
    ++p_;  // the closing quote
    if (!ascii && !valid_utf8(inside)) return false;
    if (contents) *contents = inside;
    return true;
  }

  const char* p_;
  const char* const end_;
  ResultFacts facts_;
  bool seen_is_error_ = false;
  bool line_break_ = false;  ///< whitespace since it was last reset held a line break
  std::string_view arguments_;  ///< a request's params.arguments, once found
};

}  // namespace

std::optional<ScannedResponse> scan_response(std::string_view text) { return Scanner(text).response(); }

std::optional<std::string_view> scan_request_arguments(std::string_view text) {
  return Scanner(text).request_arguments();
}

}  // namespace mcpgw::jsonrpc
