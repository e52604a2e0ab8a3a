// libFuzzer target: the OAuth resource server's token checks (auth/jwt,
// auth/jwks, auth/access) and the base64url and JSON parsing under them.
// The first byte of an input picks the mode:
//   0: the rest is an Authorization header value exactly as a client sends
//      it, checked against a key set holding the harness's RSA and EC keys;
//   1: the rest is "HEADER\nPAYLOAD" (JSON texts) that the harness encodes
//      and signs with its RSA key (RS256) before checking, so mutations reach
//      the claim checks behind the signature;
//   2: the rest is a JWKS document (parse_jwks).
// Besides sanitizer reports, a crash is any broken property: a raw token
// admitted (nobody but the harness holds the keys, and the harness signed
// nothing in mode 0), a harness-signed token refused for its signature,
// an admitted token whose issuer or audience is not the configured one.
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "auth/access.hpp"
#include "fuzz_common.hpp"
#include "util/base64.hpp"

using namespace mcpgw;

namespace {

constexpr std::int64_t kNow = 1800000000;

struct Harness {
  EVP_PKEY* rsa = nullptr;
  auth::KeySet keys;
  auth::Verifier verifier{[] {
    auth::AccessSettings s;
    s.enabled = true;
    s.bearer_tokens.push_back({"static-token", "ci", {}});
    auth::OAuthSettings o;
    o.issuer = "https://idp.test/";
    o.audience = "https://gw.test/mcp";
    o.jwks_file = "unused";
    o.required_scopes = {"mcp"};
    o.scope_modes = {{"mcp", {"all"}}, {"ro", {"readonly"}}};
    s.oauth = o;
    return s;
  }()};

  Harness() {
    rsa = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(2048));
    EVP_PKEY* ec = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
    keys.keys["rsa"] = {auth::PublicKey(rsa, EVP_PKEY_free), "RS256"};  // owns `rsa`
    keys.keys["ec"] = {auth::PublicKey(ec, EVP_PKEY_free), ""};
  }

  std::string sign(const std::string& input) const {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    std::size_t len = 0;
    std::string sig;
    if (EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, rsa) == 1 &&
        EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1) {
      sig.resize(len);
      EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size());
      sig.resize(len);
    }
    EVP_MD_CTX_free(ctx);
    return sig;
  }
};

const Harness& harness() {
  static const Harness h;
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t mode = data[0] % 3;
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const Harness& h = harness();
  using O = auth::Verdict::Outcome;
  if (mode == 2) {
    auto set = auth::parse_jwks(rest);
    MCPGW_FUZZ_CHECK(set || !set.error().empty(), "a JWKS refused without a reason");
    return 0;
  }
  if (mode == 0) {
    auth::Verdict v = h.verifier.check(rest, "", &h.keys, kNow);
    bool is_static = v.outcome == O::Admitted && v.principal == "ci";
    MCPGW_FUZZ_CHECK(v.outcome != O::Admitted || is_static, "an unsigned token admitted");
    MCPGW_FUZZ_CHECK(v.outcome == O::Admitted || v.outcome == O::Missing || !v.description.empty(),
                     "a refusal without a reason");
    return 0;
  }
  const auto nl = rest.find('\n');
  if (nl == std::string::npos) return 0;
  std::string input = base64url(rest.substr(0, nl)) + "." + base64url(rest.substr(nl + 1));
  std::string token = input + "." + base64url(h.sign(input));
  auth::Verdict v = h.verifier.check("Bearer " + token, "", &h.keys, kNow);
  MCPGW_FUZZ_CHECK(v.description != "invalid signature" || rest.find("ES256") != std::string::npos ||
                       rest.find("PS256") != std::string::npos || rest.find("\"ec\"") != std::string::npos,
                   "a token the harness signed (RS256) refused for its signature");
  if (v.outcome == O::Admitted) {
    auto jwt = auth::parse_jwt(token);
    MCPGW_FUZZ_CHECK(jwt.ok(), "an admitted token that does not parse");
    MCPGW_FUZZ_CHECK(json::get_string(jwt->claims, "iss") == "https://idp.test/", "admitted with another issuer");
    MCPGW_FUZZ_CHECK(!v.principal.empty(), "admitted without a principal");
  }
  return 0;
}
