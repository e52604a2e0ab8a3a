#include "auth/jwks.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/param_build.h>

#include "util/base64.hpp"

namespace mcpgw::auth {
namespace {

struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
struct BldFree {
  void operator()(OSSL_PARAM_BLD* b) const { OSSL_PARAM_BLD_free(b); }
};
struct ParamFree {
  void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
using Bn = std::unique_ptr<BIGNUM, BnFree>;

std::optional<std::string> member_bytes(const json::Value& jwk, std::string_view name) {
  auto text = json::get_string(jwk, name);
  if (!text || text->empty()) return std::nullopt;
  return unbase64url(*text);
}

PublicKey from_params(const char* type, OSSL_PARAM_BLD* bld) {
  std::unique_ptr<OSSL_PARAM, ParamFree> params(OSSL_PARAM_BLD_to_param(bld));
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* key = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
    ERR_clear_error();
    return nullptr;
  }
  return PublicKey(key, EVP_PKEY_free);
}

PublicKey rsa_key(const json::Value& jwk) {
  auto n = member_bytes(jwk, "n"), e = member_bytes(jwk, "e");
  // Below 2048 bits RSA is not a signature anyone should accept.
  if (!n || !e || n->size() < 256 || n->size() > 2048 || e->size() > 8) return nullptr;
  Bn bn_n(BN_bin2bn(reinterpret_cast<const unsigned char*>(n->data()), static_cast<int>(n->size()), nullptr));
  Bn bn_e(BN_bin2bn(reinterpret_cast<const unsigned char*>(e->data()), static_cast<int>(e->size()), nullptr));
  std::unique_ptr<OSSL_PARAM_BLD, BldFree> bld(OSSL_PARAM_BLD_new());
  if (!bn_n || !bn_e || !bld || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1)
    return nullptr;
  return from_params("RSA", bld.get());
}

PublicKey ec_key(const json::Value& jwk) {
  if (json::get_string(jwk, "crv") != "P-256") return nullptr;
  auto x = member_bytes(jwk, "x"), y = member_bytes(jwk, "y");
  if (!x || !y || x->size() != 32 || y->size() != 32) return nullptr;
  std::string point = "\x04" + *x + *y;  // uncompressed SEC1 point
  std::unique_ptr<OSSL_PARAM_BLD, BldFree> bld(OSSL_PARAM_BLD_new());
  if (!bld || OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) != 1 ||
      OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()) != 1)
    return nullptr;
  return from_params("EC", bld.get());
}

}  // namespace

const Jwk* KeySet::find(std::string_view kid) const {
  if (kid.empty() && keys.size() == 1) return &keys.begin()->second;
  auto it = keys.find(kid);
  return it == keys.end() ? nullptr : &it->second;
}

Result<KeySet> parse_jwks(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc) return Error{"not JSON: " + doc.error()};
  const json::Value* keys = json::find(*doc, "keys");
  if (!keys || !keys->IsArray()) return Error{"not a JWKS: expected an object with a \"keys\" array"};
  KeySet set;
  for (rapidjson::SizeType i = 0; i < keys->Size(); ++i) {
    const json::Value& jwk = (*keys)[i];
    std::string where = "keys[" + std::to_string(i) + "]";
    if (!jwk.IsObject()) return Error{where + ": expected an object"};
    if (json::get_string(jwk, "use") == "enc") continue;
    auto kty = json::get_string(jwk, "kty");
    PublicKey key;
    if (kty == "RSA") {
      key = rsa_key(jwk);
      if (!key) return Error{where + ": invalid RSA key (n, e; at least 2048 bits)"};
    } else if (kty == "EC" && json::get_string(jwk, "crv") == "P-256") {
      key = ec_key(jwk);
      if (!key) return Error{where + ": invalid EC P-256 key (x, y)"};
    } else {
      continue;
    }
    std::string kid(json::get_string(jwk, "kid").value_or(""));
    std::string alg(json::get_string(jwk, "alg").value_or(""));
    set.keys.insert_or_assign(std::move(kid), Jwk{std::move(key), std::move(alg)});
  }
  return set;
}

}  // namespace mcpgw::auth
