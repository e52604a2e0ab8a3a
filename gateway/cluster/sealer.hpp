#pragma once
// Sealed session ids (cluster.secret): the session itself, encrypted and
// authenticated with AES-256-GCM under a key derived from the secret, a
// fresh random nonce per id. Any replica holding the secret opens it; a
// forged or altered id does not open.
//
// Format: "m1" base64url(nonce[12] | ciphertext | tag[16]); the plaintext is
// the SealedSession's fields, length-prefixed.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "transport/shared_sessions.hpp"
#include "util/aead.hpp"
#include "util/result.hpp"

namespace mcpgw::cluster {

/// Plaintexts larger than this are refused: the id travels in a header of
/// every request (load balancers cap headers at 4-8 KiB).
inline constexpr std::size_t kMaxSealedBytes = 3072;

/// Seals and opens session ids with a list of secrets: the first seals,
/// every one opens, so a secret can be rotated without ending sessions.
class Sealer {
 public:
  /// `secrets` must not be empty; ids older than `ttl_s` do not open.
  Sealer(const std::vector<std::string>& secrets, std::int64_t ttl_s);

  /// The id of `s`; an error when it is larger than kMaxSealedBytes.
  Result<std::string> seal(const transport::SealedSession& s) const;
  /// The session sealed in `id`, when it opens under one of the secrets
  /// and was created at most ttl_s before `now` (unix seconds).
  std::optional<transport::SealedSession> open(std::string_view id, std::int64_t now) const;
  std::int64_t ttl_s() const { return ttl_s_; }

 private:
  Aead aead_;
  std::int64_t ttl_s_;
};

/// Hex SHA-256 of `id`, shortened: how Redis and the replicas' messages
/// name a session without holding the bearer id itself.
std::string digest_of(std::string_view id);

/// Unix seconds now.
std::int64_t unix_now();

}  // namespace mcpgw::cluster
