#include "jsonrpc/json.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace mcpgw::json {

namespace {

/// The deepest nesting accepted. Everything that walks a document (writing,
/// copying, schema validation) recurses, so a hostile "[[[[..." must be
/// refused before it exists; real MCP messages stay far below this.
constexpr int kMaxDepth = 256;

bool too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

int hex4(std::string_view s) {
  if (s.size() < 4) return -1;
  int v = 0;
  for (char c : s.substr(0, 4)) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/// Where `text` escapes a low surrogate that no high one precedes
/// ("\udc00"), if it does. RapidJSON refuses a lone high surrogate but
/// decodes a lone low one into bytes that are not UTF-8 (CESU-8): the
/// gateway would hold text other than what it writes.
std::optional<std::size_t> lone_low_surrogate(std::string_view text) {
  // Backslashes are escapes wherever the text is JSON (outside strings it
  // is not, and the parser says so).
  for (std::size_t i = text.find('\\'); i != std::string_view::npos && i + 1 < text.size(); i = text.find('\\', i)) {
    if (text[i + 1] != 'u') {
      i += 2;
      continue;
    }
    int cp = hex4(text.substr(i + 2));
    if (cp >= 0xD800 && cp <= 0xDBFF && text.substr(i + 6, 2) == "\\u") {
      int low = hex4(text.substr(i + 8));
      if (low >= 0xDC00 && low <= 0xDFFF) {
        i += 12;
        continue;
      }
    }
    if (cp >= 0xDC00 && cp <= 0xDFFF) return i;
    i += 6;
  }
  return std::nullopt;
}

/// Builds a Document from a reader's events, refusing a number that does
/// not fit a double. RapidJSON 1.1.0 refuses "1e400" but reads a long
/// mantissa with a large exponent ("2009...0480e280") as infinity, which
/// its writer then cannot write: the gateway would forward a broken
/// message (found by fuzz_jsonrpc).
class FiniteNumbers {
 public:
  explicit FiniteNumbers(Document& d) : d_(d) {}
  bool Null() { return d_.Null(); }
  bool Bool(bool b) { return d_.Bool(b); }
  bool Int(int i) { return d_.Int(i); }
  bool Uint(unsigned u) { return d_.Uint(u); }
  bool Int64(std::int64_t i) { return d_.Int64(i); }
  bool Uint64(std::uint64_t u) { return d_.Uint64(u); }
  bool Double(double x) { return std::isfinite(x) && d_.Double(x); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return d_.RawNumber(s, n, copy); }
  bool String(const char* s, rapidjson::SizeType n, bool copy) { return d_.String(s, n, copy); }
  bool StartObject() { return d_.StartObject(); }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) { return d_.Key(s, n, copy); }
  bool EndObject(rapidjson::SizeType n) { return d_.EndObject(n); }
  bool StartArray() { return d_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) { return d_.EndArray(n); }

 private:
  Document& d_;
};

/// The initial build stack of a parsed document, in bytes.
constexpr std::size_t kBuildStack = 256;

/// A thread's build stack, and whether a document holds it now.
struct ScratchBlock {
  void* block = nullptr;
  std::size_t size = 0;
  bool lent = false;
  ScratchBlock() = default;
  ScratchBlock(const ScratchBlock&) = delete;
  ScratchBlock& operator=(const ScratchBlock&) = delete;
  ~ScratchBlock() { std::free(block); }
};

ScratchBlock& scratch() {
  thread_local ScratchBlock s;
  return s;
}

/// A build stack grown past this (a huge message) is given back after use,
/// not kept for the thread's next document.
constexpr std::size_t kKeptStack = 64 * 1024;

/// `v`, built on the thread's stack into `into`, whose allocator holds it.
void build(Document& into, const Value& v) {
  auto emit = [&](Document& d) { return v.Accept(d); };
  into.Populate(emit);
}

}  // namespace

void* ScratchStack::Realloc(void* p, std::size_t, std::size_t new_size) {
  ScratchBlock& s = scratch();
  if (p == nullptr && !s.lent) {
    if (s.size < new_size) {
      std::free(s.block);
      s.size = 0;
      s.block = std::malloc(new_size);
      if (!s.block) return nullptr;
      s.size = new_size;
    }
    s.lent = true;
    return s.block;
  }
  if (p != nullptr && s.lent && p == s.block) {
    if (new_size <= s.size) return p;
    void* grown = std::realloc(p, new_size);
    if (!grown) return nullptr;
    s.block = grown;
    s.size = new_size;
    return grown;
  }
  return std::realloc(p, new_size);
}

void ScratchStack::Free(void* p) {
  ScratchBlock& s = scratch();
  if (p == nullptr || !s.lent || p != s.block) {
    std::free(p);
    return;
  }
  s.lent = false;
  if (s.size > kKeptStack) {
    std::free(s.block);
    s.block = nullptr;
    s.size = 0;
  }
}

ScratchStack& ScratchStack::shared() {
  static ScratchStack stateless;
  return stateless;
}

Result<Document> parse(std::string_view text) {
  // A peer's stray bytes are repaired as they come in, so that every
  // string the gateway holds (a tool name it lists and later looks up, a
  // claim it seals and compares) is the text it writes.
  if (!valid_utf8(text)) {
    std::string fixed = repair_utf8(text);
    return parse(std::string_view(fixed));
  }
  if (too_deep(text)) return Error{"nested deeper than " + std::to_string(kMaxDepth) + " levels"};
  if (auto at = lone_low_surrogate(text))
    return Error{"The surrogate pair in string is invalid (a lone " + std::string(text.substr(*at, 6)) +
                 ") at offset " + std::to_string(*at)};
  // The document's build stack starts small: most messages are a few
  // hundred bytes, and it is freed when the parse ends.
  Document d(rapidjson::kNullType, nullptr, kBuildStack, &ScratchStack::shared());
  // Iterative parsing keeps the parser itself off the stack. Trailing
  // garbage is an error (no kParseStopWhenDoneFlag), as a strict peer treats it.
  // No kParseFullPrecisionFlag: in RapidJSON 1.1.0 that path misreads long
  // or exponent-heavy numbers and crashes on some (upstream issues 1249,
  // 1251, 1253; found by tests/fuzz); the default path is exact to the last
  // bit or two and safe. The reader is the thread's: its stack's memory
  // serves every parse (Parse empties it, and parse() does not nest).
  thread_local rapidjson::Reader reader;
  rapidjson::MemoryStream in(text.data(), text.size());
  auto read = [&](Document& into) {
    FiniteNumbers events(into);
    return !reader.Parse<rapidjson::kParseIterativeFlag>(in, events).IsError();
  };
  d.Populate(read);
  if (reader.HasParseError()) {
    rapidjson::ParseErrorCode code = reader.GetParseErrorCode();
    if (code == rapidjson::kParseErrorTermination) code = rapidjson::kParseErrorNumberTooBig;
    return Error{std::string(rapidjson::GetParseError_En(code)) + " at offset " +
                 std::to_string(reader.GetErrorOffset())};
  }
  return d;
}

namespace {

/// A buffer this large is given back after use rather than kept for the
/// thread's next serialisation (a big tools/list should not pin memory).
constexpr std::size_t kKeptOutput = 64 * 1024;

struct ThreadWriter {
  rapidjson::StringBuffer out;
  Writer writer{out};
};

ThreadWriter& thread_writer_state() {
  thread_local ThreadWriter t;
  return t;
}

}  // namespace

Writer& detail::thread_writer() {
  ThreadWriter& t = thread_writer_state();
  t.out.Clear();
  t.writer.Reset(t.out);
  return t.writer;
}

std::string detail::thread_output() {
  ThreadWriter& t = thread_writer_state();
  std::string text(t.out.GetString(), t.out.GetSize());
  if (t.out.GetSize() > kKeptOutput) {
    t.out.Clear();
    t.out.ShrinkToFit();
  }
  return text;
}

std::string write(const Value& v) {
  return written([&](Writer& w) { v.Accept(w); });
}

Document clone(const Value& v) {
  Document d(rapidjson::kNullType, nullptr, kBuildStack, &ScratchStack::shared());
  if (v.IsObject() || v.IsArray()) build(d, v);
  else static_cast<Value&>(d) = Value(v, d.GetAllocator());
  return d;
}

Value copy(const Value& v, Allocator& a) {
  if (!v.IsObject() && !v.IsArray()) return Value(v, a);
  Document d(&a, kBuildStack, &ScratchStack::shared());
  build(d, v);
  Value out;
  out.Swap(d);
  return out;
}

const Value* find(const Value& v, std::string_view key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(ref(key));
  return it == v.MemberEnd() ? nullptr : &it->value;
}

Value* find(Value& v, std::string_view key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(ref(key));
  return it == v.MemberEnd() ? nullptr : &it->value;
}

std::optional<std::string_view> get_string(const Value& v, std::string_view key) {
  const Value* m = find(v, key);
  if (!m || !m->IsString()) return std::nullopt;
  return std::string_view(m->GetString(), m->GetStringLength());
}

void set(Value& obj, std::string_view key, Value value, Allocator& a) {
  if (Value* m = find(obj, key)) {
    *m = std::move(value);
    return;
  }
  obj.AddMember(str(key, a), value, a);
}

Value& object_member(Value& obj, std::string_view key, Allocator& a) {
  Value* m = find(obj, key);
  if (m && m->IsObject()) return *m;
  set(obj, key, Value(rapidjson::kObjectType), a);
  return *find(obj, key);
}

std::string quote(std::string_view s) {
  Value v(rapidjson::StringRef(s.data(), s.size()));
  return write(v);
}

}  // namespace mcpgw::json
