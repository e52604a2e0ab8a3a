#include "util/base64.hpp"

#include <array>
#include <cstdint>

namespace mcpgw {
namespace {

constexpr std::string_view kStd = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kUrl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string encode(std::string_view bytes, std::string_view alphabet, bool pad) {
  // Three bytes make four characters; written in place (a push_back per
  // character was most of what sealing a session id cost).
  std::size_t whole = bytes.size() / 3, rest = bytes.size() % 3;
  std::string out(whole * 4 + (rest == 0 ? 0 : pad ? 4 : rest + 1), '=');
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  char* o = out.data();
  for (std::size_t i = 0; i < whole; ++i, in += 3, o += 4) {
    std::uint32_t v = (std::uint32_t{in[0]} << 16) | (std::uint32_t{in[1]} << 8) | in[2];
    o[0] = alphabet[v >> 18];
    o[1] = alphabet[(v >> 12) & 63];
    o[2] = alphabet[(v >> 6) & 63];
    o[3] = alphabet[v & 63];
  }
  if (rest > 0) {
    std::uint32_t v = std::uint32_t{in[0]} << 16;
    if (rest == 2) v |= std::uint32_t{in[1]} << 8;
    o[0] = alphabet[v >> 18];
    o[1] = alphabet[(v >> 12) & 63];
    if (rest == 2) o[2] = alphabet[(v >> 6) & 63];
  }
  return out;
}

/// Each byte's value in `alphabet`, or 255: a table, since a search per
/// character was most of what opening a sealed session id cost.
struct Reverse {
  std::array<std::uint8_t, 256> value{};
  constexpr explicit Reverse(std::string_view alphabet) {
    value.fill(255);
    for (std::size_t i = 0; i < alphabet.size(); ++i)
      value[static_cast<unsigned char>(alphabet[i])] = static_cast<std::uint8_t>(i);
  }
};
constexpr Reverse kStdReverse(kStd);
constexpr Reverse kUrlReverse(kUrl);

std::optional<std::string> decode(std::string_view text, std::string_view alphabet) {
  if (text.size() % 4 == 1) return std::nullopt;
  const Reverse& reverse = alphabet == kUrl ? kUrlReverse : kStdReverse;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    std::uint32_t pos = reverse.value[static_cast<unsigned char>(c)];
    if (pos == 255) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 255));
    }
  }
  // Leftover bits must be zero, or two texts would decode alike.
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

}  // namespace

std::string base64(std::string_view bytes) { return encode(bytes, kStd, true); }

std::optional<std::string> unbase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  return decode(text.substr(0, text.size() - pad), kStd);
}

std::string base64url(std::string_view bytes) { return encode(bytes, kUrl, false); }

std::optional<std::string> unbase64url(std::string_view text) { return decode(text, kUrl); }

}  // namespace mcpgw
