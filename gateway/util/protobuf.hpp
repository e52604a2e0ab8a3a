#pragma once
// The few pieces of protobuf's binary encoding the gateway writes (OTLP
// spans): varints, tags and length-delimited fields at a cursor, into room
// the caller sized first. No protobuf library, no generated code.
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace mcpgw::protobuf {

/// A field's wire type.
enum class Wire { Varint = 0, Fixed64 = 1, Bytes = 2 };

/// Bytes of `v` as a varint.
inline std::size_t varint_size(std::uint64_t v) {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

/// Bytes of a length-delimited field holding `n` bytes (a field number
/// below 16: a one-byte tag).
inline std::size_t field_size(std::size_t n) { return 1 + varint_size(n) + n; }

/// Writes fields at a cursor into room its caller sized exactly. Every
/// field number is below 16, so every tag is one byte.
class Writer {
 public:
  explicit Writer(char* at) : p_(at) {}
  /// Where the next byte goes.
  char* at() const { return p_; }
  void tag(int f, Wire w) { *p_++ = static_cast<char>((f << 3) | static_cast<int>(w)); }
  void raw_varint(std::uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<char>(v);
  }
  void varint(int f, std::uint64_t v) {
    tag(f, Wire::Varint);
    raw_varint(v);
  }
  void fixed64(int f, std::uint64_t v) {
    tag(f, Wire::Fixed64);
    for (int i = 0; i < 8; ++i) *p_++ = static_cast<char>((v >> (8 * i)) & 0xff);
  }
  /// The tag and length of a length-delimited field whose `size` bytes follow.
  void header(int f, std::size_t size) {
    tag(f, Wire::Bytes);
    raw_varint(size);
  }
  void bytes(int f, std::string_view b) {
    header(f, b.size());
    raw(b);
  }
  template <std::size_t N>
  void bytes(int f, const std::array<std::uint8_t, N>& b) {
    bytes(f, std::string_view(reinterpret_cast<const char*>(b.data()), N));
  }
  /// Bytes already encoded.
  void raw(std::string_view b) {
    if (!b.empty()) std::memcpy(p_, b.data(), b.size());
    p_ += b.size();
  }

 private:
  char* p_;
};

/// Reads length-delimited fields back (what the writer wrote; the tests
/// and lookups of the gateway's own encoding, not untrusted input).
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool done() const { return in_.empty(); }
  /// The next length-delimited field: its number and bytes; nullopt at the
  /// end, on another wire type or on a length past the input.
  std::optional<std::pair<int, std::string_view>> field() {
    if (in_.empty()) return std::nullopt;
    auto tag = static_cast<unsigned char>(in_.front());
    in_.remove_prefix(1);
    auto size = varint();
    if ((tag & 7) != static_cast<int>(Wire::Bytes) || !size || *size > in_.size()) return std::nullopt;
    std::string_view b = in_.substr(0, *size);
    in_.remove_prefix(*size);
    return std::pair<int, std::string_view>(tag >> 3, b);
  }

 private:
  std::optional<std::uint64_t> varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64 && !in_.empty(); shift += 7) {
      auto b = static_cast<unsigned char>(in_.front());
      in_.remove_prefix(1);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    return std::nullopt;
  }
  std::string_view in_;
};

}  // namespace mcpgw::protobuf
