#include "auth/jwt.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/rsa.h>

#include "util/base64.hpp"

namespace mcpgw::auth {
namespace {

struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct SigFree {
  void operator()(ECDSA_SIG* s) const { ECDSA_SIG_free(s); }
};

/// JOSE writes an ES256 signature as r||s (32 bytes each); OpenSSL wants DER.
std::string der_of_raw_ecdsa(std::string_view raw) {
  if (raw.size() != 64) return {};
  std::unique_ptr<ECDSA_SIG, SigFree> sig(ECDSA_SIG_new());
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  BIGNUM* r = BN_bin2bn(p, 32, nullptr);
  BIGNUM* s = BN_bin2bn(p + 32, 32, nullptr);
  if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return {};
  }
  int len = i2d_ECDSA_SIG(sig.get(), nullptr);
  if (len <= 0) return {};
  std::string der(static_cast<std::size_t>(len), '\0');
  auto* out = reinterpret_cast<unsigned char*>(der.data());
  i2d_ECDSA_SIG(sig.get(), &out);
  return der;
}

/// SHA-256 fetched once: EVP_sha256() makes OpenSSL 3 look the
/// implementation up again on every verification, a third of its cost.
const EVP_MD* sha256() {
  static const EVP_MD* md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched ? fetched : EVP_sha256();
  }();
  return md;
}

}  // namespace

std::string_view alg_name(Alg alg) {
  switch (alg) {
    case Alg::RS256: return "RS256";
    case Alg::PS256: return "PS256";
    case Alg::ES256: return "ES256";
  }
  return "";
}

Result<Jwt> parse_jwt(std::string_view token) {
  if (token.size() > kMaxTokenBytes) return Error{"token is longer than " + std::to_string(kMaxTokenBytes) + " bytes"};
  auto dot1 = token.find('.');
  auto dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos)
    return Error{"malformed token: expected three base64url parts separated by dots"};
  auto header_text = unbase64url(token.substr(0, dot1));
  auto payload_text = unbase64url(token.substr(dot1 + 1, dot2 - dot1 - 1));
  auto signature = unbase64url(token.substr(dot2 + 1));
  if (!header_text || !payload_text || !signature) return Error{"malformed token: a part is not base64url"};
  auto header = json::parse(*header_text);
  if (!header || !header->IsObject()) return Error{"malformed token: the header is not a JSON object"};
  auto alg = json::get_string(*header, "alg");
  if (!alg) return Error{"malformed token: the header has no alg"};
  Jwt jwt;
  if (*alg == "RS256") jwt.alg = Alg::RS256;
  else if (*alg == "PS256") jwt.alg = Alg::PS256;
  else if (*alg == "ES256") jwt.alg = Alg::ES256;
  else return Error{"unsupported alg " + json::quote(*alg) + " (accepted: RS256, PS256, ES256)"};
  if (const json::Value* kid = json::find(*header, "kid")) {
    if (!kid->IsString()) return Error{"malformed token: kid is not a string"};
    jwt.kid.assign(kid->GetString(), kid->GetStringLength());
  }
  // A critical extension we do not know must make the token invalid (RFC 7515 §4.1.11).
  if (json::find(*header, "crit")) return Error{"unsupported token: the header has crit"};
  auto claims = json::parse(*payload_text);
  if (!claims || !claims->IsObject()) return Error{"malformed token: the payload is not a JSON object"};
  jwt.claims = std::move(*claims);
  jwt.signing_input = std::string(token.substr(0, dot2));
  jwt.signature = std::move(*signature);
  return jwt;
}

bool verify_signature(const Jwt& jwt, EVP_PKEY* key) {
  if (!key) return false;
  int type = EVP_PKEY_get_base_id(key);
  bool rsa = jwt.alg == Alg::RS256 || jwt.alg == Alg::PS256;
  if (rsa ? type != EVP_PKEY_RSA : type != EVP_PKEY_EC) return false;
  std::string der;
  std::string_view sig = jwt.signature;
  if (jwt.alg == Alg::ES256) {
    if (EVP_PKEY_get_bits(key) != 256) return false;
    der = der_of_raw_ecdsa(sig);
    if (der.empty()) return false;
    sig = der;
  }
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), &pctx, sha256(), nullptr, key) != 1) return false;
  if (jwt.alg == Alg::PS256) {
    // RFC 7518 §3.5: MGF1 with SHA-256, salt as long as the hash.
    if (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
        EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1 ||
        EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, sha256()) != 1)
      return false;
  }
  bool ok = EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                             reinterpret_cast<const unsigned char*>(jwt.signing_input.data()),
                             jwt.signing_input.size()) == 1;
  // A failed check leaves errors queued on this thread, where the next TLS
  // call on it would find them.
  if (!ok) ERR_clear_error();
  return ok;
}

}  // namespace mcpgw::auth
