#pragma once
// AES-256-GCM boxes under keys derived from a list of secrets: the first
// seals, every one opens, so a secret rotates without invalidating what
// the old one sealed. Each use (sessions, task ids) derives keys of its own
// from the same secret and binds its boxes to that use, so a box of one
// kind never opens as another.
//
// A box is nonce[12] | ciphertext | tag[16]. The nonce is random, or, for
// ids that must come out the same on every replica for the same content,
// derived from the content by HMAC (a synthetic IV: equal plaintexts give
// equal boxes, which reveals only that they are equal).
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace mcpgw::cluster {

class Aead {
 public:
  /// `secrets` must not be empty. `key_label` names the use in the key
  /// derivation; `aad` is the associated data of every box.
  Aead(const std::vector<std::string>& secrets, std::string_view key_label, std::string aad);

  /// The box of `plain`; `deterministic`: the same plaintext always gives
  /// the same box (synthetic nonce), else a random nonce.
  Result<std::string> seal(std::string_view plain, bool deterministic = false) const;
  /// The plaintext of `box`, when it opens under one of the keys.
  std::optional<std::string> open(std::string_view box) const;

  /// Bytes a box adds to its plaintext.
  static constexpr std::size_t kOverhead = 12 + 16;

 private:
  struct Key {
    std::array<unsigned char, 32> cipher{};
    std::array<unsigned char, 32> nonce{};  ///< keys the synthetic nonce's HMAC
  };
  std::vector<Key> keys_;
  std::string aad_;
  /// AES-256-GCM, fetched once: OpenSSL 3 looks an implicit cipher up on
  /// every use, which costs more than the encryption.
  std::shared_ptr<void> cipher_;
};

}  // namespace mcpgw::cluster
