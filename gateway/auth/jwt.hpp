#pragma once
// JSON Web Tokens in compact JWS form (RFC 7515/7519): splitting and
// decoding, and checking the signature with a public key. Only asymmetric
// algorithms exist here (RS256, PS256, ES256): a resource server holds no
// shared secret, and accepting `none` or HMAC would let anyone who knows the
// public key mint tokens.
#include <openssl/evp.h>

#include <memory>
#include <string>
#include <string_view>

#include "jsonrpc/json.hpp"
#include "util/result.hpp"

namespace mcpgw::auth {

/// The signature algorithms a token may use.
enum class Alg { RS256, PS256, ES256 };

/// The name of `alg` as JOSE writes it.
std::string_view alg_name(Alg alg);

/// A decoded token whose signature is not checked yet.
struct Jwt {
  Alg alg = Alg::RS256;
  std::string kid;            ///< empty when the header has none
  json::Document claims;      ///< the payload, a JSON object
  std::string signing_input;  ///< "header.payload" as sent (what is signed)
  std::string signature;      ///< raw signature bytes
};

/// Tokens longer than this are refused before any decoding.
constexpr std::size_t kMaxTokenBytes = 16 * 1024;

/// Splits and decodes `token`; the error says what is malformed (and names
/// a refused algorithm, e.g. "unsupported alg \"none\"").
Result<Jwt> parse_jwt(std::string_view token);

/// Owns an OpenSSL public key.
using PublicKey = std::shared_ptr<EVP_PKEY>;

/// True when `jwt`'s signature over its signing input is valid under `key`
/// for its algorithm (a key of the wrong type never verifies).
bool verify_signature(const Jwt& jwt, EVP_PKEY* key);

}  // namespace mcpgw::auth
