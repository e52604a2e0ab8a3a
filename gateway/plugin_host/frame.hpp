#pragma once
// The private framed protocol between the gateway and a plugin host
// (mcpgw-plugin-host), both sides of one machine and one build. Header only
// and standard C++ only: the host program includes nothing else of the
// gateway.
//
// A frame: u32 size of what follows, u8 type, u64 call id, u64 sub id, u32
// field count, then each field as u32 length and its bytes (length
// kAbsent: no value, a NULL string across the C ABI). Integers in the
// machine's byte order. JSON crosses as text; neither side parses the
// other's framing beyond this.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpgw::plugin_host {

/// What a frame says. G: gateway to host; H: host to gateway.
enum class Type : std::uint8_t {
  Init = 1,          ///< G: fields config_json
  Ready = 2,         ///< H: fields name, version, tools_json
  Failed = 3,        ///< H: fields message (init, list_tools or loading failed)
  Call = 4,          ///< G id: tool, arguments, input_responses, input_state, principal, mode
  Cancel = 5,        ///< G id: the client cancelled the call
  Result = 6,        ///< H id: status ("ok" | "null" | "threw" | "oom"), text
  Log = 7,           ///< H: level ("0".."3"), message
  Upstream = 8,      ///< H id, sub: server, tool, arguments (each may be absent)
  UpstreamDone = 9,  ///< G id, sub: result_json
};

/// Length of an absent field.
inline constexpr std::uint32_t kAbsent = 0xFFFFFFFFu;
/// Frames larger than this are a broken peer.
inline constexpr std::uint32_t kMaxFrame = 256u * 1024 * 1024;

struct Frame {
  Type type{};
  std::uint64_t id = 0;
  std::uint64_t sub = 0;
  std::vector<std::optional<std::string>> fields;

  /// Field `i`, or "" when missing or absent.
  std::string_view text(std::size_t i) const {
    return i < fields.size() && fields[i] ? std::string_view(*fields[i]) : std::string_view();
  }
  /// Field `i` as a C string, or null when missing or absent.
  const char* c_str(std::size_t i) const { return i < fields.size() && fields[i] ? fields[i]->c_str() : nullptr; }
};

namespace detail {
template <class T>
void put(std::string& out, T v) {
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  out.append(b, sizeof v);
}
template <class T>
T get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
}  // namespace detail

/// Appends frame (type, id, sub, fields) to `out`.
inline void encode(std::string& out, Type type, std::uint64_t id, std::uint64_t sub,
                   std::initializer_list<std::optional<std::string_view>> fields) {
  std::size_t size = 1 + 8 + 8 + 4;
  for (const auto& f : fields) size += 4 + (f ? f->size() : 0);
  out.reserve(out.size() + 4 + size);
  detail::put(out, static_cast<std::uint32_t>(size));
  detail::put(out, static_cast<std::uint8_t>(type));
  detail::put(out, id);
  detail::put(out, sub);
  detail::put(out, static_cast<std::uint32_t>(fields.size()));
  for (const auto& f : fields) {
    detail::put(out, f ? static_cast<std::uint32_t>(f->size()) : kAbsent);
    if (f) out.append(f->data(), f->size());
  }
}

/// Collects bytes and hands out whole frames.
class Decoder {
 public:
  enum class Status { Frame, More, Broken };

  void feed(std::string_view data) { buf_.append(data); }

  /// The next whole frame into `f` (Frame), not yet (More), or a frame that
  /// cannot be (Broken: the peer is not speaking this protocol).
  Status next(Frame& f) {
    const std::size_t avail = buf_.size() - pos_;
    if (avail < 4) return compact(), Status::More;
    const auto size = detail::get<std::uint32_t>(buf_.data() + pos_);
    if (size > kMaxFrame || size < 21) return Status::Broken;
    if (avail < 4 + std::size_t(size)) return compact(), Status::More;
    const char* p = buf_.data() + pos_ + 4;
    const char* end = p + size;
    f.type = static_cast<Type>(detail::get<std::uint8_t>(p));
    f.id = detail::get<std::uint64_t>(p + 1);
    f.sub = detail::get<std::uint64_t>(p + 9);
    const auto n = detail::get<std::uint32_t>(p + 17);
    p += 21;
    f.fields.clear();
    for (std::uint32_t i = 0; i < n; ++i) {
      if (end - p < 4) return Status::Broken;
      const auto len = detail::get<std::uint32_t>(p);
      p += 4;
      if (len == kAbsent) {
        f.fields.emplace_back();
        continue;
      }
      if (std::size_t(end - p) < len) return Status::Broken;
      f.fields.emplace_back(std::string(p, len));
      p += len;
    }
    if (p != end) return Status::Broken;
    pos_ += 4 + std::size_t(size);
    return Status::Frame;
  }

 private:
  /// Drops what was consumed once it is most of the buffer.
  void compact() {
    if (pos_ == 0) return;
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  std::string buf_;
  std::size_t pos_ = 0;
};

}  // namespace mcpgw::plugin_host
