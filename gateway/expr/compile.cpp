// The checker: resolves names (variables, fields of principal, tool and
// client, comprehension variables, functions), checks the types the source
// already tells, folds constant lists and maps into JSON once, compiles
// regular expressions once, and writes the flat program.
#include <optional>

#include "expr/impl.hpp"
#include "expr/parser.hpp"

namespace mcpgw::expr {
namespace {

/// What the source tells of a value's type; Dyn: only the run can tell.
enum class Type : std::uint8_t { Dyn, Null, Bool, Number, String, List, Map };

std::string_view type_name(Type t) {
  switch (t) {
    case Type::Dyn: return "dyn";
    case Type::Null: return "null";
    case Type::Bool: return "bool";
    case Type::Number: return "number";
    case Type::String: return "string";
    case Type::List: return "list";
    case Type::Map: return "map";
  }
  return "dyn";
}

struct FieldInfo {
  std::string_view record, name;
  Field field;
  Type type;
};

constexpr FieldInfo kFields[] = {
    {"principal", "name", Field::PrincipalName, Type::String},
    {"principal", "claims", Field::PrincipalClaims, Type::Map},
    {"principal", "scopes", Field::PrincipalScopes, Type::List},
    {"tool", "name", Field::ToolName, Type::String},
    {"tool", "server", Field::ToolServer, Type::String},
    {"tool", "upstream_name", Field::ToolUpstreamName, Type::String},
    {"tool", "annotations", Field::ToolAnnotations, Type::Map},
    {"tool", "slices", Field::ToolSlices, Type::List},
    {"client", "name", Field::ClientName, Type::String},
    {"client", "version", Field::ClientVersion, Type::String},
};

bool is_record(std::string_view name) { return name == "principal" || name == "tool" || name == "client"; }
bool is_variable(std::string_view name) { return is_record(name) || name == "args" || name == "mode"; }

std::string fields_of(std::string_view record) {
  std::string out;
  for (const auto& f : kFields) {
    if (f.record != record) continue;
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

struct Checked {
  std::int32_t node = -1;
  Type type = Type::Dyn;
};

class Checker {
 public:
  explicit Checker(Impl& p) : p_(p) {}

  std::optional<Checked> check(const Ast& a) {
    switch (a.kind) {
      case Ast::Kind::Null: return constant(Value{}, Type::Null, a.column);
      case Ast::Kind::Bool: return constant(Value::boolean(a.boolean), Type::Bool, a.column);
      case Ast::Kind::Number: return constant(Value::number(a.number), Type::Number, a.column);
      case Ast::Kind::String: return constant(Value::string(p_.texts.emplace_back(a.text)), Type::String, a.column);
      case Ast::Kind::Ident: return ident(a);
      case Ast::Kind::Select: return select(a);
      case Ast::Kind::Index: return index(a);
      case Ast::Kind::Call: return call(a);
      case Ast::Kind::Unary: return unary(a);
      case Ast::Kind::Binary: return binary(a);
      case Ast::Kind::List: return list(a);
      case Ast::Kind::Map: return map(a);
    }
    return fail(a.column, "unsupported expression");
  }

  const std::string& error() const { return error_; }

 private:
  std::nullopt_t fail(std::uint32_t column, const std::string& what) {
    if (error_.empty()) error_ = "column " + std::to_string(column) + ": " + what;
    return std::nullopt;
  }

  std::int32_t add(Node n) {
    p_.nodes.push_back(n);
    return static_cast<std::int32_t>(p_.nodes.size() - 1);
  }

  Checked constant(Value v, Type t, std::uint32_t column) {
    Node n;
    n.op = Op::Const;
    n.column = column;
    n.index = static_cast<std::uint32_t>(p_.constants.size());
    p_.constants.push_back(v);
    return {add(n), t};
  }

  const Value* constant_of(std::int32_t node) const {
    const Node& n = p_.nodes[static_cast<std::size_t>(node)];
    return n.op == Op::Const ? &p_.constants[n.index] : nullptr;
  }

  Checked var(Field f, Type t, std::uint32_t column) {
    Node n;
    n.op = Op::Var;
    n.field = f;
    n.column = column;
    p_.fields |= 1u << static_cast<unsigned>(f);
    return {add(n), t};
  }

  std::optional<Checked> ident(const Ast& a) {
    for (std::size_t i = locals_.size(); i-- > 0;) {
      if (locals_[i] != a.text) continue;
      Node n;
      n.op = Op::Local;
      n.slot = static_cast<std::uint8_t>(i);
      n.column = a.column;
      return Checked{add(n), Type::Dyn};
    }
    if (a.text == "args") return var(Field::Args, Type::Map, a.column);
    if (a.text == "mode") return var(Field::Mode, Type::String, a.column);
    if (is_record(a.text))
      return fail(a.column, a.text + " has no value of its own: use one of its fields (" + fields_of(a.text) + ")");
    return fail(a.column, "unknown variable '" + a.text + "' (principal, tool, args, mode, client)");
  }

  /// `record.field` when `a` is one (a Select on principal, tool or client).
  std::optional<const FieldInfo*> record_field(const Ast& a) {
    const Ast& of = *a.kids[0];
    if (of.kind != Ast::Kind::Ident || !is_record(of.text)) return nullptr;
    for (const auto& name : locals_)
      if (name == of.text) return nullptr;
    for (const auto& f : kFields)
      if (f.record == of.text && f.name == a.text) return &f;
    return fail(a.column, of.text + " has no field '" + a.text + "' (" + fields_of(of.text) + ")");
  }

  std::optional<Checked> select(const Ast& a) {
    auto rf = record_field(a);
    if (!rf) return std::nullopt;
    if (*rf) return var((*rf)->field, (*rf)->type, a.column);
    auto of = check(*a.kids[0]);
    if (!of) return std::nullopt;
    if (of->type != Type::Dyn && of->type != Type::Map)
      return fail(a.column, "field '" + a.text + "' of a " + std::string(type_name(of->type)) + " (only maps have fields)");
    Node n;
    n.op = Op::Select;
    n.column = a.column;
    n.a = of->node;
    n.name = p_.texts.emplace_back(a.text);
    return Checked{add(n), Type::Dyn};
  }

  std::optional<Checked> index(const Ast& a) {
    auto of = check(*a.kids[0]);
    if (!of) return std::nullopt;
    auto at = check(*a.kids[1]);
    if (!at) return std::nullopt;
    bool ok = of->type == Type::Dyn || (of->type == Type::List && (at->type == Type::Number || at->type == Type::Dyn)) ||
              (of->type == Type::Map && (at->type == Type::String || at->type == Type::Dyn));
    if (!ok)
      return fail(a.column, "cannot index a " + std::string(type_name(of->type)) + " with a " +
                                std::string(type_name(at->type)));
    Node n;
    n.op = Op::Index;
    n.column = a.column;
    n.a = of->node;
    n.b = at->node;
    return Checked{add(n), Type::Dyn};
  }

  static bool fits(Type t, Type want) { return t == want || t == Type::Dyn; }

  std::optional<Checked> unary(const Ast& a) {
    auto x = check(*a.kids[0]);
    if (!x) return std::nullopt;
    bool negate = a.text == "-";
    Type want = negate ? Type::Number : Type::Bool;
    if (!fits(x->type, want))
      return fail(a.column, "'" + a.text + "' needs a " + std::string(type_name(want)) + ", not a " +
                                std::string(type_name(x->type)));
    if (negate) {
      if (const Value* c = constant_of(x->node)) {
        p_.constants[p_.nodes[static_cast<std::size_t>(x->node)].index] = Value::number(-c->n);
        return Checked{x->node, Type::Number};
      }
    }
    Node n;
    n.op = negate ? Op::Neg : Op::Not;
    n.column = a.column;
    n.a = x->node;
    return Checked{add(n), want};
  }

  std::optional<Checked> binary(const Ast& a) {
    auto l = check(*a.kids[0]);
    if (!l) return std::nullopt;
    auto r = check(*a.kids[1]);
    if (!r) return std::nullopt;
    const std::string& op = a.text;
    Node n;
    n.column = a.column;
    n.a = l->node;
    n.b = r->node;
    auto mismatch = [&]() {
      return fail(a.column, "'" + op + "' between a " + std::string(type_name(l->type)) + " and a " +
                                std::string(type_name(r->type)));
    };
    Type result = Type::Bool;
    if (op == "&&" || op == "||") {
      if (!fits(l->type, Type::Bool) || !fits(r->type, Type::Bool)) return mismatch();
      n.op = op == "&&" ? Op::And : Op::Or;
    } else if (op == "==" || op == "!=") {
      bool scalar_l = l->type != Type::Dyn && l->type != Type::Null, scalar_r = r->type != Type::Dyn && r->type != Type::Null;
      if (scalar_l && scalar_r && l->type != r->type) return mismatch();
      n.op = op == "==" ? Op::Eq : Op::Ne;
    } else if (op == "<" || op == "<=" || op == ">" || op == ">=") {
      bool ok = (fits(l->type, Type::Number) && fits(r->type, Type::Number)) ||
                (fits(l->type, Type::String) && fits(r->type, Type::String));
      if (!ok) return mismatch();
      n.op = op == "<" ? Op::Lt : op == "<=" ? Op::Le : op == ">" ? Op::Gt : Op::Ge;
    } else if (op == "in") {
      if (r->type != Type::Dyn && r->type != Type::List && r->type != Type::Map) return mismatch();
      n.op = Op::In;
    } else if (op == "+") {
      if (fits(l->type, Type::Number) && fits(r->type, Type::Number))
        result = l->type == Type::Dyn ? r->type : Type::Number;
      else if (fits(l->type, Type::String) && fits(r->type, Type::String))
        result = Type::String;
      else
        return mismatch();
      if (l->type == Type::Dyn && r->type == Type::Dyn) result = Type::Dyn;
      n.op = Op::Add;
    } else if (op == "-" || op == "*" || op == "/") {
      if (!fits(l->type, Type::Number) || !fits(r->type, Type::Number)) return mismatch();
      result = Type::Number;
      n.op = op == "-" ? Op::Sub : op == "*" ? Op::Mul : Op::Div;
    } else {
      return fail(a.column, "unsupported operator '" + op + "'");
    }
    return Checked{add(n), result};
  }

  /// The constant JSON a constant value is, in the program's pool.
  json::Value to_json(const Value& v) {
    switch (v.kind) {
      case Value::Kind::Bool: return json::Value(v.b);
      case Value::Kind::Number: return json::Value(v.n);
      case Value::Kind::String:
        return json::Value(v.s.data(), static_cast<rapidjson::SizeType>(v.s.size()), p_.pool);
      case Value::Kind::Json: return json::Value(*v.j, p_.pool);
      default: return json::Value();
    }
  }

  /// A list or map node over `kids`, folded into one JSON constant when
  /// every part is a constant.
  std::optional<Checked> aggregate(const Ast& a, Op op, Type type) {
    std::vector<std::int32_t> parts;
    bool folded = true;
    for (std::size_t i = 0; i < a.kids.size(); ++i) {
      auto k = check(*a.kids[i]);
      if (!k) return std::nullopt;
      if (op == Op::Map && i % 2 == 0 && !fits(k->type, Type::String))
        return fail(a.kids[i]->column, "a map's keys are strings, not a " + std::string(type_name(k->type)));
      folded = folded && constant_of(k->node);
      parts.push_back(k->node);
    }
    if (folded) {
      json::Value v(op == Op::List ? rapidjson::kArrayType : rapidjson::kObjectType);
      for (std::size_t i = 0; i < parts.size(); ++i) {
        if (op == Op::List) {
          v.PushBack(to_json(*constant_of(parts[i])), p_.pool);
        } else {
          json::Value key = to_json(*constant_of(parts[i]));
          v.AddMember(key, to_json(*constant_of(parts[i + 1])), p_.pool);
          ++i;
        }
      }
      Value c;
      c.kind = Value::Kind::Json;
      c.j = &p_.literals.emplace_back(std::move(v));
      return constant(c, type, a.column);
    }
    Node n;
    n.op = op;
    n.column = a.column;
    n.first = static_cast<std::uint32_t>(p_.operands.size());
    n.count = static_cast<std::uint32_t>(parts.size());
    p_.operands.insert(p_.operands.end(), parts.begin(), parts.end());
    return Checked{add(n), type};
  }

  std::optional<Checked> list(const Ast& a) { return aggregate(a, Op::List, Type::List); }
  std::optional<Checked> map(const Ast& a) { return aggregate(a, Op::Map, Type::Map); }

  std::optional<Checked> call(const Ast& a) {
    const std::string& f = a.text;
    std::size_t want = (f == "exists" || f == "all") ? 2 : (f == "size" && a.target) ? 0 : 1;
    bool method = a.target != nullptr;
    bool known = method ? (f == "size" || f == "startsWith" || f == "endsWith" || f == "contains" || f == "matches" ||
                           f == "exists" || f == "all")
                        : (f == "has" || f == "size");
    if (!known)
      return fail(a.column, "unknown " + std::string(method ? "method" : "function") + " '" + f + "'" +
                                (method ? " (size, startsWith, endsWith, contains, matches, exists, all)"
                                        : " (has, size)"));
    if (a.kids.size() != want)
      return fail(a.column, f + "() takes " + std::to_string(want) + " argument" + (want == 1 ? "" : "s"));
    if (!method && f == "has") return has(a);
    if (f == "exists" || f == "all") return comprehension(a);
    const Ast& subject = method ? *a.target : *a.kids[0];
    auto x = check(subject);
    if (!x) return std::nullopt;
    Node n;
    n.column = a.column;
    n.a = x->node;
    if (f == "size") {
      if (x->type != Type::Dyn && x->type != Type::String && x->type != Type::List && x->type != Type::Map)
        return fail(a.column, "size() of a " + std::string(type_name(x->type)));
      n.op = Op::Size;
      return Checked{add(n), Type::Number};
    }
    if (!fits(x->type, Type::String)) return fail(a.column, f + "() on a " + std::string(type_name(x->type)));
    if (f == "matches") {
      const Ast& re = *a.kids[0];
      if (re.kind != Ast::Kind::String) return fail(re.column, "matches() takes a string literal (compiled once)");
      RE2::Options o;
      o.set_log_errors(false);
      auto compiled = std::make_unique<RE2>(re.text, o);
      if (!compiled->ok()) return fail(re.column, "invalid regular expression: " + compiled->error());
      n.op = Op::Matches;
      n.index = static_cast<std::uint32_t>(p_.regexes.size());
      p_.regexes.push_back(std::move(compiled));
      return Checked{add(n), Type::Bool};
    }
    auto arg = check(*a.kids[0]);
    if (!arg) return std::nullopt;
    if (!fits(arg->type, Type::String)) return fail(a.kids[0]->column, f + "() takes a string");
    n.op = f == "startsWith" ? Op::StartsWith : f == "endsWith" ? Op::EndsWith : Op::Contains;
    n.b = arg->node;
    return Checked{add(n), Type::Bool};
  }

  std::optional<Checked> has(const Ast& a) {
    const Ast& sel = *a.kids[0];
    if (sel.kind != Ast::Kind::Select) return fail(sel.column, "has() takes a field selection (has(a.b))");
    auto rf = record_field(sel);
    if (!rf) return std::nullopt;
    if (*rf) return constant(Value::boolean(true), Type::Bool, a.column);
    auto of = check(*sel.kids[0]);
    if (!of) return std::nullopt;
    if (!fits(of->type, Type::Map)) return fail(sel.column, "has() of a field of a " + std::string(type_name(of->type)));
    Node n;
    n.op = Op::Has;
    n.column = a.column;
    n.a = of->node;
    n.name = p_.texts.emplace_back(sel.text);
    return Checked{add(n), Type::Bool};
  }

  std::optional<Checked> comprehension(const Ast& a) {
    auto range = check(*a.target);
    if (!range) return std::nullopt;
    if (range->type != Type::Dyn && range->type != Type::List && range->type != Type::Map)
      return fail(a.column, a.text + "() over a " + std::string(type_name(range->type)));
    const Ast& var = *a.kids[0];
    if (var.kind != Ast::Kind::Ident) return fail(var.column, a.text + "() takes a variable name first");
    if (is_variable(var.text)) return fail(var.column, "'" + var.text + "' is a variable of its own: choose another name");
    for (const auto& l : locals_)
      if (l == var.text) return fail(var.column, "'" + var.text + "' is already in use");
    if (locals_.size() >= kMaxLocals) return fail(var.column, "exists() and all() nested too deeply");
    locals_.push_back(var.text);
    auto pred = check(*a.kids[1]);
    locals_.pop_back();
    if (!pred) return std::nullopt;
    if (!fits(pred->type, Type::Bool))
      return fail(a.kids[1]->column, a.text + "() needs a boolean condition, not a " + std::string(type_name(pred->type)));
    Node n;
    n.op = a.text == "exists" ? Op::Exists : Op::All;
    n.column = a.column;
    n.slot = static_cast<std::uint8_t>(locals_.size());
    n.a = range->node;
    n.b = pred->node;
    return Checked{add(n), Type::Bool};
  }

  Impl& p_;
  std::vector<std::string> locals_;
  std::string error_;
};

}  // namespace

Result<std::shared_ptr<const Program>> Program::compile(std::string_view source) {
  auto ast = parse(source);
  if (!ast) return Error{ast.error()};
  auto impl = std::make_unique<Impl>();
  Checker checker(*impl);
  auto root = checker.check(**ast);
  if (!root) return Error{checker.error()};
  if (root->type != Type::Bool && root->type != Type::Dyn)
    return Error{"column 1: the expression is a " + std::string(type_name(root->type)) + ", not a boolean"};
  impl->root = root->node;
  return std::shared_ptr<const Program>(std::make_shared<Program>(std::move(impl)));
}

Program::Program(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Program::~Program() = default;

bool Program::uses(Field f) const { return impl_->fields & (1u << static_cast<unsigned>(f)); }

}  // namespace mcpgw::expr
