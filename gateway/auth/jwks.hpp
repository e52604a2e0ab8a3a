#pragma once
// JSON Web Key Sets (RFC 7517): the public keys an authorization server
// signs tokens with, as OpenSSL keys by key id.
#include <map>
#include <string>
#include <string_view>

#include "auth/jwt.hpp"

namespace mcpgw::auth {

/// One usable public key of a set.
struct Jwk {
  PublicKey key;
  std::string alg;  ///< the JWK's `alg`, empty when it declares none
};

/// The signing keys of one JWKS document by `kid` (a key without kid is
/// stored under "").
struct KeySet {
  std::map<std::string, Jwk, std::less<>> keys;
  /// The key for a token with `kid`; a token without kid takes the set's
  /// only key. nullptr when there is none.
  const Jwk* find(std::string_view kid) const;
};

/// Reads a JWKS document. Keys of types other than RSA and EC P-256, and
/// encryption keys (`use: enc`), are skipped; a document that is not a
/// JWKS, or a supported key with bad parameters, is an error naming it.
Result<KeySet> parse_jwks(std::string_view text);

}  // namespace mcpgw::auth
