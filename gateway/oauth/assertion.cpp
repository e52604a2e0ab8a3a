#include "oauth/assertion.hpp"

#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "jsonrpc/json.hpp"
#include "util/base64.hpp"
#include "util/random.hpp"

namespace mcpgw::oauth {
namespace {

EVP_PKEY* pkey(const std::shared_ptr<void>& k) { return static_cast<EVP_PKEY*>(k.get()); }

/// An ECDSA signature in DER as JOSE wants it: r and s, 32 bytes each.
Result<std::string> raw_ecdsa(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())),
                                                            ECDSA_SIG_free);
  if (!sig) return Error{"the EC signature does not decode"};
  std::string out(64, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  if (BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), o, 32) != 32 || BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), o + 32, 32) != 32)
    return Error{"the EC signature is not P-256"};
  return out;
}

}  // namespace

Result<std::shared_ptr<const SigningKey>> SigningKey::load(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file) return Error{"cannot read private_key_file " + path};
  EVP_PKEY* raw = PEM_read_PrivateKey(file.get(), nullptr, nullptr, nullptr);
  if (!raw) return Error{"private_key_file " + path + " holds no PEM private key (encrypted keys are not supported)"};
  std::shared_ptr<void> key(raw, [](void* k) { EVP_PKEY_free(static_cast<EVP_PKEY*>(k)); });
  if (EVP_PKEY_is_a(raw, "RSA")) {
    if (EVP_PKEY_get_bits(raw) < 2048) return Error{"private_key_file " + path + ": an RSA key needs 2048 bits or more"};
    return std::make_shared<const SigningKey>(std::move(key), "RS256");
  }
  if (EVP_PKEY_is_a(raw, "EC")) {
    char group[64] = {0};
    std::size_t len = 0;
    if (EVP_PKEY_get_group_name(raw, group, sizeof group, &len) != 1 || std::string_view(group) != "prime256v1")
      return Error{"private_key_file " + path + ": an EC key must be on P-256 (ES256)"};
    return std::make_shared<const SigningKey>(std::move(key), "ES256");
  }
  return Error{"private_key_file " + path + ": expected an RSA or EC P-256 key"};
}

Result<std::string> SigningKey::assertion(const std::string& client_id, const std::string& audience) const {
  json::Document header(rapidjson::kObjectType), claims(rapidjson::kObjectType);
  auto& ha = header.GetAllocator();
  header.AddMember("alg", json::str(alg_, ha), ha);
  header.AddMember("typ", "JWT", ha);
  auto& ca = claims.GetAllocator();
  auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  claims.AddMember("iss", json::str(client_id, ca), ca);
  claims.AddMember("sub", json::str(client_id, ca), ca);
  claims.AddMember("aud", json::str(audience, ca), ca);
  claims.AddMember("jti", json::str(random_hex(16), ca), ca);
  claims.AddMember("iat", static_cast<std::int64_t>(now), ca);
  claims.AddMember("exp", static_cast<std::int64_t>(now + 60), ca);
  std::string input = base64url(json::write(header)) + "." + base64url(json::write(claims));

  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::size_t len = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, pkey(key_)) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
    return Error{"signing the client assertion failed"};
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
    return Error{"signing the client assertion failed"};
  sig.resize(len);
  if (alg_ == "ES256") {
    auto raw = raw_ecdsa(sig);
    if (!raw) return Error{raw.error()};
    sig = std::move(*raw);
  }
  return input + "." + base64url(sig);
}

}  // namespace mcpgw::oauth
