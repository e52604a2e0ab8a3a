#pragma once
// The plaintext of a sealed id: a format byte, then fixed-width integers and
// length-prefixed strings, big-endian. Small and exact, so a box that opens
// but was made for another layout is refused rather than misread.
#include <cstdint>
#include <string>
#include <string_view>

namespace mcpgw::cluster {

/// Appends fields to a plaintext.
class FieldWriter {
 public:
  explicit FieldWriter(std::uint8_t format) { out_.push_back(static_cast<char>(format)); }
  FieldWriter& u64(std::uint64_t v) {
    for (int i = 7; i >= 0; --i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  FieldWriter& text(std::string_view f) {
    for (int i = 3; i >= 0; --i) out_.push_back(static_cast<char>((f.size() >> (8 * i)) & 0xff));
    out_.append(f);
    return *this;
  }
  const std::string& plain() const { return out_; }

 private:
  std::string out_;
};

/// Reads fields back in the order they were written; ok() is false once
/// anything did not fit, and done() also needs every byte consumed.
class FieldReader {
 public:
  FieldReader(std::string_view in, std::uint8_t format) : in_(in) { ok_ = raw(1) == format; }
  std::uint64_t u64() { return raw(8); }
  std::string text() {
    auto n = raw(4);
    if (!ok_ || in_.size() < n) {
      ok_ = false;
      return {};
    }
    std::string f(in_.substr(0, n));
    in_.remove_prefix(n);
    return f;
  }
  bool done() const { return ok_ && in_.empty(); }

 private:
  std::uint64_t raw(int bytes) {
    if (in_.size() < static_cast<std::size_t>(bytes)) {
      ok_ = false;
      return 0;
    }
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(in_[static_cast<std::size_t>(i)]);
    in_.remove_prefix(static_cast<std::size_t>(bytes));
    return v;
  }
  std::string_view in_;
  bool ok_ = true;
};

}  // namespace mcpgw::cluster
