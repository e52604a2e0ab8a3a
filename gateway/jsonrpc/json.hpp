#pragma once
// Small helpers over RapidJSON shared by every module.
#include <rapidjson/document.h>
#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>
#include <cstddef>

#include <optional>
#include <string>
#include <string_view>

#include "util/result.hpp"
#include "util/utf8.hpp"

namespace mcpgw::json {

/// RapidJSON's memory pool with small chunks. Its default is 64 KiB per
/// document on the first allocation: with a document or more per call and
/// per session, thousands of calls and sessions at once cost hundreds of
/// megabytes for a few hundred bytes each. Larger values get chunks of
/// their own size, so big documents are not slower to build.
///
/// A chunk and its header (24 bytes) stay within malloc's per-thread cache
/// (requests up to 1032 bytes), and the pool draws on one stateless
/// CrtAllocator instead of allocating one of its own: a document costs one
/// fast allocation for a small message, not three with a slow one.
class Pool : public rapidjson::MemoryPoolAllocator<> {
 public:
  static constexpr std::size_t kChunk = 1008;
  Pool() : MemoryPoolAllocator(kChunk, &crt()) {}
  explicit Pool(std::size_t chunk, rapidjson::CrtAllocator* base = nullptr)
      : MemoryPoolAllocator(chunk, base ? base : &crt()) {}

 private:
  /// malloc and free, which hold no state: one serves every pool.
  static rapidjson::CrtAllocator& crt() {
    static rapidjson::CrtAllocator base;
    return base;
  }
};

/// The build stack of a document (where parse() and copy() assemble a
/// value): one block per thread, kept from one document to the next.
/// RapidJSON would allocate a stack, and an object for its allocator, for
/// every parse and every deep copy, and free both at the end: a proxied
/// call makes five. A stack holds anything only while parse() or copy()
/// fills it, on the thread that called them; a second stack in use on the
/// same thread meanwhile gets memory of its own.
class ScratchStack {
 public:
  static constexpr bool kNeedFree = true;
  void* Malloc(std::size_t size) { return Realloc(nullptr, 0, size); }
  void* Realloc(void* p, std::size_t old_size, std::size_t new_size);
  static void Free(void* p);
  /// The one instance every document is given (the block is the thread's).
  static ScratchStack& shared();
};

using Value = rapidjson::GenericValue<rapidjson::UTF8<>, Pool>;
using Document = rapidjson::GenericDocument<rapidjson::UTF8<>, Pool, ScratchStack>;
using Allocator = Pool;
/// Checks documents against a JSON Schema (draft-04 keywords).
using SchemaDocument = rapidjson::GenericSchemaDocument<Value>;
using SchemaValidator = rapidjson::GenericSchemaValidator<SchemaDocument>;

/// Parses `text` into a new document; the error names offset and reason.
/// Ill-formed UTF-8 in `text` is read as U+FFFD (see Writer).
Result<Document> parse(std::string_view text);

/// The writer of every serialisation, so what the gateway sends is always
/// JSON in well-formed UTF-8. RapidJSON's stops at a non-finite number and
/// leaves the text cut short; such a number (a parsed 2e308 is infinite) is
/// written as null. RapidJSON reads and writes a string's bytes unchecked;
/// ill-formed UTF-8 (a peer's stray bytes, or a lone `\udc00` escape) is
/// written with U+FFFD in its place.
class Writer : public rapidjson::Writer<rapidjson::StringBuffer> {
  using Base = rapidjson::Writer<rapidjson::StringBuffer>;

 public:
  using Base::Base;
  using Base::Key;
  using Base::String;
  bool Double(double d) { return std::isfinite(d) ? Base::Double(d) : Null(); }
  bool String(const Ch* s, rapidjson::SizeType n, bool copy = false) {
    if (valid_utf8({s, n})) return Base::String(s, n, copy);
    std::string fixed = repair_utf8({s, n});
    return Base::String(fixed.data(), static_cast<rapidjson::SizeType>(fixed.size()), true);
  }
  bool Key(const Ch* s, rapidjson::SizeType n, bool copy = false) {
    if (valid_utf8({s, n})) return Base::Key(s, n, copy);
    std::string fixed = repair_utf8({s, n});
    return Base::Key(fixed.data(), static_cast<rapidjson::SizeType>(fixed.size()), true);
  }
};

namespace detail {
/// The thread's writer, emptied, writing to the thread's buffer.
Writer& thread_writer();
/// What the thread's writer wrote since thread_writer().
std::string thread_output();
}  // namespace detail

/// What `emit(Writer&)` writes. The buffer and the writer's stack are the
/// thread's, kept from one serialisation to the next (one allocation, the
/// result's, instead of three); `emit` must not serialise through written()
/// itself.
template <typename Emit>
std::string written(Emit&& emit) {
  Writer& w = detail::thread_writer();
  emit(w);
  return detail::thread_output();
}

/// Compact serialisation of any value.
std::string write(const Value& v);

/// Deep copy of `v` into a new document. Every deep copy goes through
/// clone() or copy(): RapidJSON's own (`CopyFrom`, the copy constructor
/// with an allocator) builds through a stack it allocates each time.
Document clone(const Value& v);

/// Deep copy of `v` with its memory from `a` (a member or element of a
/// document of `a`'s). Strings `v` refers to without owning them are
/// referred to, not copied, as RapidJSON's copy does.
Value copy(const Value& v, Allocator& a);

/// Member `key` of object `v`, or nullptr when `v` is not an object or lacks it.
const Value* find(const Value& v, std::string_view key);
Value* find(Value& v, std::string_view key);

/// Member `key` as a string, if present and a string.
std::optional<std::string_view> get_string(const Value& v, std::string_view key);

/// A string value referring to `s` without copying: `s` must outlive its use.
inline Value ref(std::string_view s) {
  return Value(rapidjson::StringRef(s.data(), s.size()));
}

/// A string value holding its own copy of `s`.
inline Value str(std::string_view s, Allocator& a) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

/// Sets (or replaces) member `key` of object `obj`, copying the key.
void set(Value& obj, std::string_view key, Value value, Allocator& a);
/// Member `key` of object `obj` as an object: an empty one put there first
/// when it is missing or not an object (e.g. a request's `_meta`).
Value& object_member(Value& obj, std::string_view key, Allocator& a);

/// Quotes `s` as a JSON string literal.
std::string quote(std::string_view s);

}  // namespace mcpgw::json
