// The evaluator: walks the flat program over borrowed values. Errors and
// unknowns are values, so `&&`, `||`, exists() and all() decide as CEL
// does whatever order their operands fail in (false && error is false,
// true || error is true); what still depends on an error is an error.
#include <cmath>
#include <deque>
#include <optional>

#include "expr/impl.hpp"

namespace mcpgw::expr {

Value Value::of(const json::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType: return Value{};
    case rapidjson::kFalseType: return boolean(false);
    case rapidjson::kTrueType: return boolean(true);
    case rapidjson::kNumberType: return number(v.GetDouble());
    case rapidjson::kStringType: return string(std::string_view(v.GetString(), v.GetStringLength()));
    default: {
      Value r;
      r.kind = Kind::Json;
      r.j = &v;
      return r;
    }
  }
}

namespace {

using K = Value::Kind;

/// Deepest JSON two values are compared to (a client's arguments may nest
/// as deep as their parser allowed).
constexpr int kMaxCompareDepth = 64;

const json::Value& empty_map() {
  static const json::Value kEmpty(rapidjson::kObjectType);
  return kEmpty;
}

Value map_of(const json::Value* v) {
  Value r;
  r.kind = K::Json;
  r.j = v && v->IsObject() ? v : &empty_map();
  return r;
}

Value strings_of(std::span<const std::string> s) {
  Value r;
  r.kind = K::Strings;
  r.strs = s;
  return r;
}

bool failed(const Value& v) { return v.kind == K::Error || v.kind == K::Unknown; }

/// What the evaluation of one program keeps: the comprehension variables,
/// and what strings joined or lists built at run time are stored in (made
/// only when needed).
struct Frame {
  const Impl& p;
  const Env& env;
  Value locals[kMaxLocals];
  std::vector<std::unique_ptr<std::string>> strings;
  struct Built {
    json::Pool pool;
    std::deque<json::Value> values;  ///< a deque: what it holds never moves
  };
  std::unique_ptr<Built> built;

  Built& lists() {
    if (!built) built = std::make_unique<Built>();
    return *built;
  }
};

/// Element `i` of a list value, as a Value.
Value element(const Value& list, std::size_t i) {
  if (list.kind == K::Strings) return Value::string(list.strs[i]);
  return Value::of((*list.j)[static_cast<rapidjson::SizeType>(i)]);
}

/// -1 unequal, 1 equal, 0 cannot tell (too deep).
int equal(const Value& a, const Value& b, int depth);

int equal_json(const json::Value& a, const json::Value& b, int depth) {
  return equal(Value::of(a), Value::of(b), depth);
}

bool is_list(const Value& v) { return v.kind == K::Strings || (v.kind == K::Json && v.j->IsArray()); }
std::size_t list_size(const Value& v) { return v.kind == K::Strings ? v.strs.size() : v.j->Size(); }

int equal(const Value& a, const Value& b, int depth) {
  if (depth > kMaxCompareDepth) return 0;
  if (is_list(a) && is_list(b)) {
    if (list_size(a) != list_size(b)) return -1;
    for (std::size_t i = 0; i < list_size(a); ++i) {
      int e = equal(element(a, i), element(b, i), depth + 1);
      if (e != 1) return e;
    }
    return 1;
  }
  if (a.kind != b.kind) return -1;
  switch (a.kind) {
    case K::Null: return 1;
    case K::Bool: return a.b == b.b ? 1 : -1;
    case K::Number: return a.n == b.n ? 1 : -1;
    case K::String: return a.s == b.s ? 1 : -1;
    case K::Json: {
      if (!a.j->IsObject() || !b.j->IsObject()) return -1;
      if (a.j->MemberCount() != b.j->MemberCount()) return -1;
      for (const auto& m : a.j->GetObject()) {
        auto it = b.j->FindMember(m.name);
        if (it == b.j->MemberEnd()) return -1;
        int e = equal_json(m.value, it->value, depth + 1);
        if (e != 1) return e;
      }
      return 1;
    }
    default: return -1;
  }
}

Value eval(Frame& f, std::int32_t at);

Value field(const Frame& f, const Node& n) {
  const Env& e = f.env;
  switch (n.field) {
    case Field::PrincipalName: return Value::string(e.principal_name);
    case Field::PrincipalClaims: return map_of(e.claims);
    case Field::PrincipalScopes: return strings_of(e.scopes);
    case Field::ToolName: return Value::string(e.tool_name);
    case Field::ToolServer: return Value::string(e.tool_server);
    case Field::ToolUpstreamName: return Value::string(e.tool_upstream_name);
    case Field::ToolAnnotations: return map_of(e.annotations);
    case Field::ToolSlices: return strings_of(e.slices);
    case Field::Args: return e.args_unknown ? Value::unknown() : map_of(e.args);
    case Field::Mode: return Value::string(e.mode);
    case Field::ClientName: return Value::string(e.client_name);
    case Field::ClientVersion: return Value::string(e.client_version);
  }
  return Value::error("unknown field", n.column);
}

Value select(const Value& of, std::string_view name, const Node& n) {
  if (failed(of)) return of;
  if (of.kind != K::Json || !of.j->IsObject()) return Value::error("field of a value that is not a map", n.column);
  auto it = of.j->FindMember(json::Value(rapidjson::StringRef(name.data(), name.size())));
  if (it == of.j->MemberEnd()) return Value::error("no such field", n.column);
  return Value::of(it->value);
}

Value index(const Value& of, const Value& at, const Node& n) {
  if (failed(of)) return of;
  if (failed(at)) return at;
  if (is_list(of)) {
    if (at.kind != K::Number || at.n < 0 || at.n != std::floor(at.n)) return Value::error("list index is not a whole number", n.column);
    if (at.n >= static_cast<double>(list_size(of))) return Value::error("list index out of range", n.column);
    return element(of, static_cast<std::size_t>(at.n));
  }
  if (of.kind == K::Json && of.j->IsObject()) {
    if (at.kind != K::String) return Value::error("map key is not a string", n.column);
    return select(of, at.s, n);
  }
  return Value::error("index of a value that is neither a list nor a map", n.column);
}

Value logic(Frame& f, const Node& n) {
  bool is_and = n.op == Op::And;
  Value l = eval(f, n.a);
  // The short circuit: the left side alone decides.
  if (l.kind == K::Bool && l.b != is_and) return l;
  Value r = eval(f, n.b);
  if (r.kind == K::Bool && r.b != is_and) return r;
  if (l.kind == K::Bool && r.kind == K::Bool) return l;
  if (l.kind == K::Unknown || r.kind == K::Unknown) return Value::unknown();
  if (l.kind == K::Error) return l;
  if (r.kind == K::Error) return r;
  return Value::error(is_and ? "&& of a value that is not a boolean" : "|| of a value that is not a boolean", n.column);
}

Value compare(const Value& l, const Value& r, const Node& n) {
  if (failed(l)) return l;
  if (failed(r)) return r;
  if (n.op == Op::Eq || n.op == Op::Ne) {
    int e = equal(l, r, 0);
    if (e == 0) return Value::error("values nested too deeply to compare", n.column);
    return Value::boolean((e == 1) == (n.op == Op::Eq));
  }
  int c = 0;
  if (l.kind == K::Number && r.kind == K::Number) {
    c = l.n < r.n ? -1 : l.n > r.n ? 1 : 0;
  } else if (l.kind == K::String && r.kind == K::String) {
    c = l.s.compare(r.s);
  } else {
    return Value::error("ordering needs two numbers or two strings", n.column);
  }
  switch (n.op) {
    case Op::Lt: return Value::boolean(c < 0);
    case Op::Le: return Value::boolean(c <= 0);
    case Op::Gt: return Value::boolean(c > 0);
    default: return Value::boolean(c >= 0);
  }
}

Value in(const Value& x, const Value& range, const Node& n) {
  if (failed(x)) return x;
  if (failed(range)) return range;
  if (is_list(range)) {
    for (std::size_t i = 0; i < list_size(range); ++i) {
      int e = equal(x, element(range, i), 0);
      if (e == 0) return Value::error("values nested too deeply to compare", n.column);
      if (e == 1) return Value::boolean(true);
    }
    return Value::boolean(false);
  }
  if (range.kind == K::Json && range.j->IsObject()) {
    if (x.kind != K::String) return Value::boolean(false);
    return Value::boolean(range.j->FindMember(json::Value(rapidjson::StringRef(x.s.data(), x.s.size()))) !=
                          range.j->MemberEnd());
  }
  return Value::error("'in' needs a list or a map", n.column);
}

Value arithmetic(Frame& f, const Value& l, const Value& r, const Node& n) {
  if (failed(l)) return l;
  if (failed(r)) return r;
  if (n.op == Op::Add && l.kind == K::String && r.kind == K::String) {
    auto& s = f.strings.emplace_back(std::make_unique<std::string>());
    s->reserve(l.s.size() + r.s.size());
    s->append(l.s).append(r.s);
    return Value::string(*s);
  }
  if (l.kind != K::Number || r.kind != K::Number)
    return Value::error(n.op == Op::Add ? "'+' needs two numbers or two strings" : "arithmetic on a value that is not a number",
                        n.column);
  double v = 0;
  switch (n.op) {
    case Op::Add: v = l.n + r.n; break;
    case Op::Sub: v = l.n - r.n; break;
    case Op::Mul: v = l.n * r.n; break;
    default:
      if (r.n == 0) return Value::error("division by zero", n.column);
      v = l.n / r.n;
  }
  if (!std::isfinite(v)) return Value::error("number out of range", n.column);
  return Value::number(v);
}

Value size(const Value& x, const Node& n) {
  if (failed(x)) return x;
  if (x.kind == K::String) {
    std::size_t points = 0;
    for (unsigned char c : x.s) points += (c & 0xC0) != 0x80;
    return Value::number(static_cast<double>(points));
  }
  if (is_list(x)) return Value::number(static_cast<double>(list_size(x)));
  if (x.kind == K::Json) return Value::number(static_cast<double>(x.j->MemberCount()));
  return Value::error("size() of a value that is neither a string, a list nor a map", n.column);
}

Value text_test(Frame& f, const Node& n) {
  Value x = eval(f, n.a);
  if (failed(x)) return x;
  if (x.kind != K::String) return Value::error("string method on a value that is not a string", n.column);
  if (n.op == Op::Matches) {
    const RE2& re = *f.p.regexes[n.index];
    return Value::boolean(RE2::PartialMatch(re2::StringPiece(x.s.data(), x.s.size()), re));
  }
  Value arg = eval(f, n.b);
  if (failed(arg)) return arg;
  if (arg.kind != K::String) return Value::error("string method with an argument that is not a string", n.column);
  std::string_view s = x.s, t = arg.s;
  switch (n.op) {
    case Op::StartsWith: return Value::boolean(s.substr(0, t.size()) == t);
    case Op::EndsWith: return Value::boolean(s.size() >= t.size() && s.substr(s.size() - t.size()) == t);
    default: return Value::boolean(s.find(t) != std::string_view::npos);
  }
}

Value comprehension(Frame& f, const Node& n) {
  Value range = eval(f, n.a);
  if (failed(range)) return range;
  bool exists = n.op == Op::Exists;
  bool unknown = false;
  std::optional<Value> error;
  auto test = [&](Value item) {
    f.locals[n.slot] = item;
    Value v = eval(f, n.b);
    if (v.kind == K::Bool) return v.b == exists;
    if (v.kind == K::Unknown) unknown = true;
    else if (!error) error = v.kind == K::Error ? v : Value::error("condition is not a boolean", n.column);
    return false;
  };
  bool decided = false;
  if (is_list(range)) {
    for (std::size_t i = 0; i < list_size(range) && !decided; ++i) decided = test(element(range, i));
  } else if (range.kind == K::Json && range.j->IsObject()) {
    for (auto it = range.j->MemberBegin(); it != range.j->MemberEnd() && !decided; ++it) decided = test(Value::of(it->name));
  } else {
    return Value::error(exists ? "exists() over a value that is neither a list nor a map"
                               : "all() over a value that is neither a list nor a map",
                        n.column);
  }
  if (decided) return Value::boolean(exists);
  if (unknown) return Value::unknown();
  if (error) return *error;
  return Value::boolean(!exists);
}

/// A list or map built at run time, in the frame's document.
Value aggregate(Frame& f, const Node& n) {
  Frame::Built& built = f.lists();
  auto& alloc = built.pool;
  json::Value out(n.op == Op::List ? rapidjson::kArrayType : rapidjson::kObjectType);
  auto to_json = [&](const Value& v) -> json::Value {
    switch (v.kind) {
      case K::Bool: return json::Value(v.b);
      case K::Number: return json::Value(v.n);
      case K::String: return json::Value(v.s.data(), static_cast<rapidjson::SizeType>(v.s.size()), alloc);
      case K::Json: return json::Value(*v.j, alloc);
      case K::Strings: {
        json::Value a(rapidjson::kArrayType);
        for (const auto& s : v.strs) a.PushBack(json::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), alloc), alloc);
        return a;
      }
      default: return json::Value();
    }
  };
  for (std::uint32_t i = 0; i < n.count; ++i) {
    Value v = eval(f, f.p.operands[n.first + i]);
    if (failed(v)) return v;
    if (n.op == Op::List) {
      out.PushBack(to_json(v), alloc);
      continue;
    }
    Value val = eval(f, f.p.operands[n.first + ++i]);
    if (failed(val)) return val;
    if (v.kind != K::String) return Value::error("a map's key is not a string", n.column);
    out.AddMember(to_json(v), to_json(val), alloc);
  }
  Value r;
  r.kind = K::Json;
  r.j = &built.values.emplace_back(std::move(out));
  return r;
}

Value eval(Frame& f, std::int32_t at) {
  const Node& n = f.p.nodes[static_cast<std::size_t>(at)];
  switch (n.op) {
    case Op::Const: return f.p.constants[n.index];
    case Op::Var: return field(f, n);
    case Op::Local: return f.locals[n.slot];
    case Op::Select: return select(eval(f, n.a), n.name, n);
    case Op::Index: {
      Value of = eval(f, n.a);
      return index(of, eval(f, n.b), n);
    }
    case Op::Has: {
      Value of = eval(f, n.a);
      if (failed(of)) return of;
      if (of.kind != K::Json || !of.j->IsObject()) return Value::error("has() of a field of a value that is not a map", n.column);
      return Value::boolean(of.j->FindMember(json::Value(rapidjson::StringRef(n.name.data(), n.name.size()))) !=
                            of.j->MemberEnd());
    }
    case Op::Not: {
      Value x = eval(f, n.a);
      if (failed(x)) return x;
      if (x.kind != K::Bool) return Value::error("'!' of a value that is not a boolean", n.column);
      return Value::boolean(!x.b);
    }
    case Op::Neg: {
      Value x = eval(f, n.a);
      if (failed(x)) return x;
      if (x.kind != K::Number) return Value::error("'-' of a value that is not a number", n.column);
      return Value::number(-x.n);
    }
    case Op::And:
    case Op::Or: return logic(f, n);
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge: {
      Value l = eval(f, n.a);
      return compare(l, eval(f, n.b), n);
    }
    case Op::In: {
      Value x = eval(f, n.a);
      return in(x, eval(f, n.b), n);
    }
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div: {
      Value l = eval(f, n.a);
      return arithmetic(f, l, eval(f, n.b), n);
    }
    case Op::Size: return size(eval(f, n.a), n);
    case Op::StartsWith:
    case Op::EndsWith:
    case Op::Contains:
    case Op::Matches: return text_test(f, n);
    case Op::Exists:
    case Op::All: return comprehension(f, n);
    case Op::List:
    case Op::Map: return aggregate(f, n);
  }
  return Value::error("unknown operation", n.column);
}

}  // namespace

Outcome Program::eval(const Env& env) const {
  Frame f{*impl_, env, {}, {}, {}};
  Value v = mcpgw::expr::eval(f, impl_->root);
  switch (v.kind) {
    case K::Bool: return {v.b ? Truth::True : Truth::False, {}, 0};
    case K::Unknown: return {Truth::Unknown, {}, 0};
    case K::Error: return {Truth::Error, v.s, v.column};
    default: return {Truth::Error, "the expression's value is not a boolean", 1};
  }
}

}  // namespace mcpgw::expr
