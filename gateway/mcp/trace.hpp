#pragma once
// W3C Trace Context (traceparent) as MCP carries it: an HTTP header, or
// `params._meta.traceparent` where there are no headers (stdio).
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "jsonrpc/message.hpp"
#include "util/random.hpp"

namespace mcpgw::mcp {

/// `_meta` key of the trace context.
inline constexpr std::string_view kMetaTraceparent = "traceparent";

/// A W3C id as its `N` lower-case hex digits, held in place: a trace
/// context is copied along every call and its spans, and ids in strings of
/// their own cost an allocation each copy. Empty until set.
template <std::size_t N>
class HexId {
 public:
  HexId() = default;
  /// `hex` when it has exactly N characters, empty otherwise.
  explicit HexId(std::string_view hex) {
    if (hex.size() != N) return;
    hex.copy(digits_.data(), N);
    set_ = true;
  }
  /// N random digits (util/random's unique_hex).
  static HexId random();

  std::string_view view() const { return {digits_.data(), set_ ? N : 0}; }
  std::string str() const { return std::string(view()); }
  std::size_t size() const { return set_ ? N : 0; }
  bool empty() const { return !set_; }
  friend bool operator==(const HexId& a, const HexId& b) { return a.view() == b.view(); }
  friend bool operator==(const HexId& a, std::string_view b) { return a.view() == b; }

 private:
  std::array<char, N> digits_{};
  bool set_ = false;
};

template <std::size_t N>
HexId<N> HexId<N>::random() {
  static_assert(N % 2 == 0);
  HexId id;
  unique_hex_into(id.digits_.data(), N / 2);
  id.set_ = true;
  return id;
}

/// One span of a trace: version 00 `traceparent` fields.
struct TraceContext {
  HexId<32> trace_id;  ///< not all zero
  HexId<16> span_id;   ///< not all zero
  std::string flags = "01";

  /// Parses a `traceparent` value; nullopt when it is not a valid one
  /// (W3C rules: a version other than 00 is read by its first four fields).
  static std::optional<TraceContext> parse(std::string_view traceparent);
  /// A new trace (random ids), for a call that came without one.
  static TraceContext fresh();
  /// A child span of this one: the same trace, a new span id.
  TraceContext child() const;
  /// `00-<trace>-<span>-<flags>`.
  std::string header() const;
};

/// The trace context a client sent with request `params` (`_meta.traceparent`),
/// or nullopt.
std::optional<TraceContext> trace_of(const json::Value* params);

/// Puts `traceparent` (an HTTP request's header) into request `m`'s
/// `_meta.traceparent` unless the request carries one already, so the
/// handler finds the trace context where stdio clients put it.
void adopt_traceparent(jsonrpc::Message& m, std::string_view traceparent);

}  // namespace mcpgw::mcp
