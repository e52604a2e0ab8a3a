#pragma once
// AES-256-GCM with keys derived from secrets: what sealed session ids,
// task ids, OAuth flow states and the tokens at rest are made with. A box
// is nonce[12] | ciphertext | tag[16], and `aad` binds a box to its use (a
// box made for one purpose does not open as another). The nonce is random,
// or, for ids that must come out the same on every replica for the same
// content, derived from the content by HMAC (a synthetic IV: equal
// plaintexts give equal boxes, which reveals only that they are equal).
#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace mcpgw {

/// Seals with the first of its keys and opens with any of them, so a
/// secret can be rotated without losing what the old one sealed.
class Aead {
 public:
  static constexpr std::size_t kNonce = 12;
  static constexpr std::size_t kTag = 16;
  /// Bytes a box adds to its plaintext.
  static constexpr std::size_t kOverhead = kNonce + kTag;
  using Key = std::array<unsigned char, 32>;
  /// How a box's nonce is made.
  enum class Nonce {
    Random,     ///< fresh for every seal
    Synthetic,  ///< HMAC of the plaintext: the same plaintext, the same box
  };

  /// Keys are SHA-256(`purpose` "\n" secret), synthetic nonces' HMAC keys
  /// SHA-256(`purpose` " nonce\n" secret): the same secret used for another
  /// purpose gives other keys. `secrets` must not be empty. Nothing of
  /// OpenSSL is touched until the first seal or open.
  Aead(std::string_view purpose, const std::vector<std::string>& secrets);

  /// The box of `plain`; an error only when OpenSSL fails.
  Result<std::string> seal(std::string_view plain, std::string_view aad, Nonce nonce = Nonce::Random) const;
  /// The plaintext of `box`, when one of the keys opens it with `aad`.
  std::optional<std::string> open(std::string_view box, std::string_view aad) const;

 private:
  struct Keys {
    std::vector<Key> keys;
    std::vector<Key> nonce_keys;  ///< keys of the synthetic nonces' HMAC
    /// AES-256-GCM, fetched once: OpenSSL 3 looks an implicit cipher up on
    /// every use, which costs more than the encryption.
    std::shared_ptr<void> cipher;
  };
  /// The keys, derived on first use: the first SHA-256 or fetch loads
  /// OpenSSL's providers, about 2 MB that a gateway which never seals
  /// anything (most of them, most of the time) need not carry.
  const Keys& keys() const;

  std::string purpose_;
  mutable std::vector<std::string> secrets_;  ///< until the keys are derived
  mutable std::once_flag derived_;
  mutable Keys keys_;
};

}  // namespace mcpgw
