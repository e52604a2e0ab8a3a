#pragma once
// private_key_jwt (RFC 7523 §2.2, OpenID Connect Core §9): the gateway
// proves who it is to a token endpoint with a short-lived JWT signed by
// its own key instead of a shared secret.
#include <memory>
#include <string>

#include "util/result.hpp"

namespace mcpgw::oauth {

/// A private key from a PEM file: RSA (signs RS256) or EC P-256 (ES256).
class SigningKey {
 public:
  /// Reads `path`; the error names the file and what is wrong with it.
  static Result<std::shared_ptr<const SigningKey>> load(const std::string& path);
  /// "RS256" or "ES256".
  const std::string& alg() const { return alg_; }
  /// A client assertion: iss = sub = `client_id`, aud = `audience` (the
  /// token endpoint), a random jti, iat now, exp a minute later.
  Result<std::string> assertion(const std::string& client_id, const std::string& audience) const;

  SigningKey(std::shared_ptr<void> key, std::string alg) : key_(std::move(key)), alg_(std::move(alg)) {}

 private:
  std::shared_ptr<void> key_;  ///< EVP_PKEY
  std::string alg_;
};

}  // namespace mcpgw::oauth
