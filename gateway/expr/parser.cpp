#include "expr/parser.hpp"

#include <charconv>
#include <cmath>
#include <optional>

namespace mcpgw::expr {
namespace {

enum class Tok : std::uint8_t { End, Ident, Number, String, Punct };

struct Token {
  Tok kind = Tok::End;
  std::string text;  ///< identifier, punctuation, or the decoded string
  double number = 0;
  std::uint32_t column = 0;
};

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  /// The next token, or an error naming its column.
  Result<Token> next() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
    Token t;
    t.column = static_cast<std::uint32_t>(i_ + 1);
    if (i_ >= s_.size()) return t;
    char c = s_[i_];
    if (ident_start(c)) {
      std::size_t b = i_;
      while (i_ < s_.size() && ident_char(s_[i_])) ++i_;
      t.kind = Tok::Ident;
      t.text = std::string(s_.substr(b, i_ - b));
      return t;
    }
    if (c >= '0' && c <= '9') return number(t);
    if (c == '"' || c == '\'') return string(t, c);
    static constexpr std::string_view kTwo[] = {"==", "!=", "<=", ">=", "&&", "||"};
    for (auto two : kTwo) {
      if (s_.substr(i_, 2) == two) {
        i_ += 2;
        t.kind = Tok::Punct;
        t.text = std::string(two);
        return t;
      }
    }
    if (std::string_view("!<>+-*/%()[]{},.:").find(c) != std::string_view::npos) {
      ++i_;
      t.kind = Tok::Punct;
      t.text = std::string(1, c);
      return t;
    }
    return fail(t.column, "unexpected character '" + std::string(1, c) + "'");
  }

 private:
  static Error fail(std::uint32_t column, const std::string& what) {
    return Error{"column " + std::to_string(column) + ": " + what};
  }

  Result<Token> number(Token t) {
    std::size_t b = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    if (i_ + 1 < s_.size() && s_[i_] == '.' && s_[i_ + 1] >= '0' && s_[i_ + 1] <= '9') {
      ++i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      std::size_t e = i_ + 1;
      if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) ++e;
      if (e < s_.size() && s_[e] >= '0' && s_[e] <= '9') {
        i_ = e;
        while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      }
    }
    auto text = s_.substr(b, i_ - b);
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), t.number);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(t.number))
      return fail(t.column, "invalid number " + std::string(text));
    if (i_ < s_.size() && ident_char(s_[i_])) return fail(t.column, "invalid number " + std::string(s_.substr(b, i_ - b + 1)));
    t.kind = Tok::Number;
    return t;
  }

  Result<Token> string(Token t, char quote) {
    ++i_;
    std::string out;
    for (;;) {
      if (i_ >= s_.size() || s_[i_] == '\n') return fail(t.column, "unterminated string");
      char c = s_[i_++];
      if (c == quote) break;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (i_ >= s_.size()) return fail(t.column, "unterminated string");
      char e = s_[i_++];
      switch (e) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case '\\': case '\'': case '"': case '/': out.push_back(e); break;
        case 'u': {
          std::uint32_t cp = 0;
          if (i_ + 4 > s_.size()) return fail(static_cast<std::uint32_t>(i_ + 1), "\\u needs four hex digits");
          auto [end, ec] = std::from_chars(s_.data() + i_, s_.data() + i_ + 4, cp, 16);
          if (ec != std::errc() || end != s_.data() + i_ + 4 || (cp >= 0xD800 && cp <= 0xDFFF))
            return fail(static_cast<std::uint32_t>(i_ + 1), "\\u needs four hex digits of a code point");
          i_ += 4;
          append_utf8(out, cp);
          break;
        }
        default:
          return fail(static_cast<std::uint32_t>(i_), "unknown escape \\" + std::string(1, e));
      }
    }
    t.kind = Tok::String;
    t.text = std::move(out);
    return t;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

class Parser {
 public:
  explicit Parser(std::string_view s) : lex_(s) {}

  Result<std::unique_ptr<Ast>> run() {
    if (!advance()) return err();
    auto e = expression();
    if (!e) return err();
    if (cur_.kind != Tok::End) return fail(cur_.column, "unexpected " + describe(cur_));
    return std::move(*e);
  }

 private:
  using Node = std::unique_ptr<Ast>;

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::End: return "end of expression";
      case Tok::String: return "string";
      case Tok::Number: return "number";
      default: return "'" + t.text + "'";
    }
  }

  Result<std::unique_ptr<Ast>> err() { return Error{error_}; }
  Result<std::unique_ptr<Ast>> fail(std::uint32_t column, const std::string& what) {
    error_ = "column " + std::to_string(column) + ": " + what;
    return Error{error_};
  }
  std::nullopt_t failed(std::uint32_t column, const std::string& what) {
    error_ = "column " + std::to_string(column) + ": " + what;
    return std::nullopt;
  }

  bool advance() {
    auto t = lex_.next();
    if (!t) {
      error_ = t.error();
      return false;
    }
    cur_ = std::move(*t);
    return true;
  }
  bool is(std::string_view punct) const { return cur_.kind == Tok::Punct && cur_.text == punct; }
  bool is_word(std::string_view w) const { return cur_.kind == Tok::Ident && cur_.text == w; }
  bool expect(std::string_view punct) {
    if (!is(punct)) {
      failed(cur_.column, "expected '" + std::string(punct) + "', found " + describe(cur_));
      return false;
    }
    return advance();
  }

  static Node make(Ast::Kind k, std::uint32_t column) {
    auto n = std::make_unique<Ast>();
    n->kind = k;
    n->column = column;
    return n;
  }
  static Node binary(std::string op, std::uint32_t column, Node l, Node r) {
    auto n = make(Ast::Kind::Binary, column);
    n->text = std::move(op);
    n->kids.push_back(std::move(l));
    n->kids.push_back(std::move(r));
    return n;
  }

  std::optional<Node> expression() {
    int saved = depth_;
    if (!deeper(cur_.column)) return std::nullopt;
    auto e = or_expr();
    depth_ = saved;
    return e;
  }

  /// One more node above what follows: a left-deep chain (`a || b || c`,
  /// `a.b.c`) is as deep as it is long, so each operator counts.
  bool deeper(std::uint32_t column) {
    if (++depth_ <= kMaxDepth) return true;
    failed(column, "expression nested too deeply");
    return false;
  }

  std::optional<Node> or_expr() {
    auto l = and_expr();
    while (l && is("||")) {
      auto col = cur_.column;
      if (!deeper(col) || !advance()) return std::nullopt;
      auto r = and_expr();
      if (!r) return std::nullopt;
      l = binary("||", col, std::move(*l), std::move(*r));
    }
    return l;
  }

  std::optional<Node> and_expr() {
    auto l = relation();
    while (l && is("&&")) {
      auto col = cur_.column;
      if (!deeper(col) || !advance()) return std::nullopt;
      auto r = relation();
      if (!r) return std::nullopt;
      l = binary("&&", col, std::move(*l), std::move(*r));
    }
    return l;
  }

  std::optional<Node> relation() {
    auto l = additive();
    while (l && (is("==") || is("!=") || is("<") || is("<=") || is(">") || is(">=") || is_word("in"))) {
      std::string op = cur_.text;
      auto col = cur_.column;
      if (!deeper(col) || !advance()) return std::nullopt;
      auto r = additive();
      if (!r) return std::nullopt;
      l = binary(op, col, std::move(*l), std::move(*r));
    }
    return l;
  }

  std::optional<Node> additive() {
    auto l = multiplicative();
    while (l && (is("+") || is("-"))) {
      std::string op = cur_.text;
      auto col = cur_.column;
      if (!deeper(col) || !advance()) return std::nullopt;
      auto r = multiplicative();
      if (!r) return std::nullopt;
      l = binary(op, col, std::move(*l), std::move(*r));
    }
    return l;
  }

  std::optional<Node> multiplicative() {
    auto l = unary();
    while (l && (is("*") || is("/") || is("%"))) {
      std::string op = cur_.text;
      auto col = cur_.column;
      if (!deeper(col) || !advance()) return std::nullopt;
      auto r = unary();
      if (!r) return std::nullopt;
      l = binary(op, col, std::move(*l), std::move(*r));
    }
    return l;
  }

  std::optional<Node> unary() {
    if (is("!") || is("-")) {
      if (!deeper(cur_.column)) return std::nullopt;
      auto n = make(Ast::Kind::Unary, cur_.column);
      n->text = cur_.text;
      if (!advance()) return std::nullopt;
      auto operand = unary();
      if (!operand) return std::nullopt;
      n->kids.push_back(std::move(*operand));
      return n;
    }
    return member();
  }

  /// `(args)` after a function or method name, into `call`.
  bool arguments(Ast& call) {
    if (!advance()) return false;  // the '('
    if (is(")")) return advance();
    for (;;) {
      auto a = expression();
      if (!a) return false;
      call.kids.push_back(std::move(*a));
      if (is(")")) return advance();
      if (!expect(",")) return false;
    }
  }

  std::optional<Node> member() {
    auto n = primary();
    while (n && (is(".") || is("["))) {
      auto col = cur_.column;
      if (!deeper(col)) return std::nullopt;
      if (is("[")) {
        if (!advance()) return std::nullopt;
        auto index = expression();
        if (!index || !expect("]")) return std::nullopt;
        auto i = make(Ast::Kind::Index, col);
        i->kids.push_back(std::move(*n));
        i->kids.push_back(std::move(*index));
        n = std::move(i);
        continue;
      }
      if (!advance()) return std::nullopt;
      if (cur_.kind != Tok::Ident) return failed(cur_.column, "expected a field or method name after '.'");
      std::string name = cur_.text;
      auto name_col = cur_.column;
      if (!advance()) return std::nullopt;
      if (is("(")) {
        auto call = make(Ast::Kind::Call, name_col);
        call->text = std::move(name);
        call->target = std::move(*n);
        if (!arguments(*call)) return std::nullopt;
        n = std::move(call);
      } else {
        auto sel = make(Ast::Kind::Select, name_col);
        sel->text = std::move(name);
        sel->kids.push_back(std::move(*n));
        n = std::move(sel);
      }
    }
    return n;
  }

  std::optional<Node> primary() {
    auto col = cur_.column;
    switch (cur_.kind) {
      case Tok::End: return failed(col, "unexpected end of expression");
      case Tok::Number: {
        auto n = make(Ast::Kind::Number, col);
        n->number = cur_.number;
        if (!advance()) return std::nullopt;
        return n;
      }
      case Tok::String: {
        auto n = make(Ast::Kind::String, col);
        n->text = std::move(cur_.text);
        if (!advance()) return std::nullopt;
        return n;
      }
      case Tok::Ident: {
        std::string name = cur_.text;
        if (!advance()) return std::nullopt;
        if (name == "true" || name == "false") {
          auto n = make(Ast::Kind::Bool, col);
          n->boolean = name == "true";
          return n;
        }
        if (name == "null") return make(Ast::Kind::Null, col);
        if (name == "in") return failed(col, "unexpected 'in'");
        if (is("(")) {
          auto call = make(Ast::Kind::Call, col);
          call->text = std::move(name);
          if (!arguments(*call)) return std::nullopt;
          return call;
        }
        auto n = make(Ast::Kind::Ident, col);
        n->text = std::move(name);
        return n;
      }
      case Tok::Punct: break;
    }
    if (is("(")) {
      if (!advance()) return std::nullopt;
      auto e = expression();
      if (!e || !expect(")")) return std::nullopt;
      return e;
    }
    if (is("[")) {
      auto list = make(Ast::Kind::List, col);
      if (!advance()) return std::nullopt;
      while (!is("]")) {
        auto e = expression();
        if (!e) return std::nullopt;
        list->kids.push_back(std::move(*e));
        if (is("]")) break;
        if (!expect(",")) return std::nullopt;
      }
      if (!advance()) return std::nullopt;
      return list;
    }
    if (is("{")) {
      auto map = make(Ast::Kind::Map, col);
      if (!advance()) return std::nullopt;
      while (!is("}")) {
        auto k = expression();
        if (!k || !expect(":")) return std::nullopt;
        auto v = expression();
        if (!v) return std::nullopt;
        map->kids.push_back(std::move(*k));
        map->kids.push_back(std::move(*v));
        if (is("}")) break;
        if (!expect(",")) return std::nullopt;
      }
      if (!advance()) return std::nullopt;
      return map;
    }
    return failed(col, "unexpected " + describe(cur_));
  }

  Lexer lex_;
  Token cur_;
  std::string error_;
  int depth_ = 0;
};

}  // namespace

Result<std::unique_ptr<Ast>> parse(std::string_view source) {
  if (source.size() > kMaxSource)
    return Error{"column 1: expression longer than " + std::to_string(kMaxSource) + " bytes"};
  return Parser(source).run();
}

}  // namespace mcpgw::expr
