// The cost of checking one OAuth access token with a cached key: what every
// request to an mcpgw with auth.oauth pays (scripts/bench, section auth).
//   jwt_bench                 # per-token cost for RS256, PS256, ES256
//   jwt_bench --emit DIR      # writes DIR/jwks.json and DIR/token (RS256,
//                             # iss https://idp.bench/, aud https://gw.bench/mcp)
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "auth/access.hpp"
#include "auth/token_cache.hpp"
#include "util/base64.hpp"

using namespace mcpgw;

namespace {

constexpr const char* kIssuer = "https://idp.bench/";
constexpr const char* kAudience = "https://gw.bench/mcp";

std::string bn_param(EVP_PKEY* k, const char* name) {
  BIGNUM* bn = nullptr;
  EVP_PKEY_get_bn_param(k, name, &bn);
  std::string out(static_cast<std::size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  BN_free(bn);
  return out;
}

std::string sign(EVP_PKEY* key, auth::Alg alg, const std::string& input) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_PKEY_CTX* pctx = nullptr;
  EVP_DigestSignInit(ctx, &pctx, EVP_sha256(), nullptr, key);
  if (alg == auth::Alg::PS256) {
    EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING);
    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST);
  }
  std::size_t len = 0;
  EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()), input.size());
  std::string sig(len, '\0');
  EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                 reinterpret_cast<const unsigned char*>(input.data()), input.size());
  sig.resize(len);
  EVP_MD_CTX_free(ctx);
  if (alg != auth::Alg::ES256) return sig;
  // DER -> the JOSE r||s form.
  const auto* p = reinterpret_cast<const unsigned char*>(sig.data());
  ECDSA_SIG* es = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(sig.size()));
  std::string raw(64, '\0');
  BN_bn2binpad(ECDSA_SIG_get0_r(es), reinterpret_cast<unsigned char*>(raw.data()), 32);
  BN_bn2binpad(ECDSA_SIG_get0_s(es), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
  ECDSA_SIG_free(es);
  return raw;
}

std::string token(EVP_PKEY* key, auth::Alg alg, const std::string& kid) {
  std::string header = R"({"alg":")" + std::string(auth::alg_name(alg)) + R"(","kid":")" + kid + R"("})";
  std::string claims = std::string(R"({"iss":")") + kIssuer + R"(","aud":")" + kAudience +
                       R"(","sub":"bench","scope":"mcp","exp":4102444800})";
  std::string input = base64url(header) + "." + base64url(claims);
  return input + "." + base64url(sign(key, alg, input));
}

auth::Verifier verifier() {
  auth::AccessSettings s;
  s.enabled = true;
  auth::OAuthSettings o;
  o.issuer = kIssuer;
  o.audience = kAudience;
  o.jwks_file = "-";
  o.required_scopes = {"mcp"};
  s.oauth = o;
  return auth::Verifier(s);
}

}  // namespace

int main(int argc, char** argv) {
  EVP_PKEY* rsa = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(2048));
  EVP_PKEY* ec = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  if (argc == 3 && std::string(argv[1]) == "--emit") {
    std::string dir = argv[2];
    std::ofstream(dir + "/jwks.json") << R"({"keys":[{"kty":"RSA","kid":"bench","alg":"RS256","n":")"
                                      << base64url(bn_param(rsa, OSSL_PKEY_PARAM_RSA_N)) << R"(","e":")"
                                      << base64url(bn_param(rsa, OSSL_PKEY_PARAM_RSA_E)) << "\"}]}\n";
    std::ofstream(dir + "/token") << token(rsa, auth::Alg::RS256, "bench");
    return 0;
  }
  auth::KeySet keys;
  keys.keys["rsa"] = {auth::PublicKey(rsa, EVP_PKEY_free), ""};
  keys.keys["ec"] = {auth::PublicKey(ec, EVP_PKEY_free), ""};
  auth::Verifier v = verifier();
  const std::int64_t now = 1800000000;
  struct Case {
    auth::Alg alg;
    const char* kid;
    EVP_PKEY* key;
  };
  for (Case c : {Case{auth::Alg::RS256, "rsa", rsa}, Case{auth::Alg::PS256, "rsa", rsa}, Case{auth::Alg::ES256, "ec", ec}}) {
    std::string header = "Bearer " + token(c.key, c.alg, c.kid);
    if (v.check(header, "", &keys, now).outcome != auth::Verdict::Outcome::Admitted) {
      std::fprintf(stderr, "jwt_bench: the %s token was refused\n", std::string(auth::alg_name(c.alg)).c_str());
      return 1;
    }
    // Side by side: the whole check, and the bare signature verification
    // it contains (the floor), alternating so load affects both alike.
    auto jwt = auth::parse_jwt(std::string_view(header).substr(7));
    const int n = 2000;
    double full = 0, bare = 0;
    int ok = 0;
    for (int round = 0; round < 10; ++round) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) ok += v.check(header, "", &keys, now).outcome == auth::Verdict::Outcome::Admitted;
      auto t1 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) ok += auth::verify_signature(*jwt, c.key);
      auto t2 = std::chrono::steady_clock::now();
      full += std::chrono::duration<double, std::micro>(t1 - t0).count();
      bare += std::chrono::duration<double, std::micro>(t2 - t1).count();
    }
    std::printf("verify %s: %.2f us per token (cached key, claims and scope checked); signature alone %.2f us; "
                "ratio %.2f (%d checks)\n",
                std::string(auth::alg_name(c.alg)).c_str(), full / (10 * n), bare / (10 * n), full / bare, ok);
  }
  // What a request pays when its client sends the same token again: the
  // gateway keeps the verdict until the token expires.
  auto shared = std::make_shared<const auth::KeySet>(keys);
  auth::TokenCache cache;
  std::string header = "Bearer " + token(rsa, auth::Alg::RS256, "rsa");
  cache.put(header, shared, v.identify(header, shared.get(), now), now);
  const int n = 200000;
  int hits = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    auto hit = cache.find(header, shared, now);
    if (hit) v.restrict_to_mode(*hit, "");
    hits += hit.has_value();
  }
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
  std::printf("verify RS256 again (the same token, verdict cached): %.2f us per request (%d hits)\n", us, hits);
  return 0;
}
