#include "saga/token.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <array>

#include "util/base64.hpp"
#include "util/hex.hpp"
#include "util/random.hpp"

namespace mcpgw::saga {
namespace {

constexpr std::string_view kPrefix = "mcpgw1.";

std::int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Refusal refuse(Refusal::Why why, std::string message) { return Refusal{why, std::move(message)}; }

}  // namespace

std::string digest(const json::Value* v) {
  return sha256_hex(v ? json::write(*v) : "null");
}

Keyring::Keyring(std::vector<std::string> secrets, std::chrono::seconds ttl) : keys_(std::move(secrets)), ttl_(ttl) {
  if (keys_.empty()) {
    keys_.push_back(random_hex(32));
    ephemeral_ = true;
  }
}

std::string Keyring::mac(std::string_view key, std::string_view data) const {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), md.data(), &len);
  return std::string(reinterpret_cast<const char*>(md.data()), len);
}

Result<std::string> Keyring::seal(Claims c) const {
  json::Document p(rapidjson::kObjectType);
  auto& a = p.GetAllocator();
  p.AddMember("k", json::str(c.kind, a), a);
  p.AddMember("p", json::str(c.principal, a), a);
  p.AddMember("t", json::str(c.target, a), a);
  p.AddMember("a", json::str(c.args_digest, a), a);
  p.AddMember("i", json::str(random_hex(12), a), a);
  p.AddMember("e", now_s() + ttl_.count(), a);
  p.AddMember("s", json::copy(c.state, a), a);
  std::string token(kPrefix);
  token += base64url(json::write(p));
  std::string sig = base64url(mac(keys_.front(), token));
  token += '.';
  token += sig;
  if (token.size() > kMaxTokenBytes)
    return Error{"the continuation state is " + std::to_string(token.size()) + " bytes signed, over the limit of " +
                 std::to_string(kMaxTokenBytes)};
  return token;
}

std::variant<Claims, Refusal> Keyring::open(std::string_view token, const Claims& expect) const {
  using W = Refusal::Why;
  if (token.size() > kMaxTokenBytes)
    return refuse(W::TooLarge, "token is " + std::to_string(token.size()) + " bytes, over the limit of " +
                                   std::to_string(kMaxTokenBytes));
  if (token.substr(0, kPrefix.size()) != kPrefix) return refuse(W::Malformed, "not a token issued by mcpgw");
  auto dot = token.rfind('.');
  if (dot < kPrefix.size()) return refuse(W::Malformed, "not a token issued by mcpgw");
  std::string_view signed_part = token.substr(0, dot);
  // A signature that does not even decode is as wrong as one that does not
  // match: one refusal for both, whichever byte was changed.
  auto sig = unbase64url(token.substr(dot + 1));
  if (!sig) return refuse(W::Signature, "token signature does not verify (tampered, or signed with another secret)");
  bool good = false;
  // Every key is tried, whatever matched: the time taken says nothing.
  for (const auto& k : keys_) {
    std::string m = mac(k, signed_part);
    if (m.size() == sig->size() && CRYPTO_memcmp(m.data(), sig->data(), m.size()) == 0) good = true;
  }
  if (!good) return refuse(W::Signature, "token signature does not verify (tampered, or signed with another secret)");
  auto payload = unbase64url(signed_part.substr(kPrefix.size()));
  auto doc = payload ? json::parse(*payload) : Result<json::Document>(Error{"not base64url"});
  // A well-signed token that does not parse was issued by a buggy build.
  if (!doc || !doc->IsObject()) return refuse(W::Malformed, "token payload is unreadable");
  Claims c;
  const json::Document& p = *doc;
  auto text = [&](const char* key) { return std::string(json::get_string(p, key).value_or("")); };
  c.kind = text("k");
  c.principal = text("p");
  c.target = text("t");
  c.args_digest = text("a");
  c.id = text("i");
  const json::Value* e = json::find(p, "e");
  c.expires = e && e->IsInt64() ? e->GetInt64() : 0;
  if (const json::Value* s = json::find(p, "s")) c.state = json::clone(*s);
  if (c.kind != expect.kind) return refuse(W::WrongKind, "token is a " + c.kind + " token, not a " + expect.kind + " one");
  if (c.expires < now_s())
    return refuse(W::Expired, "token expired " + std::to_string(now_s() - c.expires) + " s ago (sagas.ttl_s is " +
                                  std::to_string(ttl_.count()) + " s)");
  if (c.principal != expect.principal) return refuse(W::WrongPrincipal, "token was issued to another principal");
  // A saga's resume names neither tool nor arguments: the token does.
  if (expect.target.empty()) return c;
  if (c.target != expect.target) return refuse(W::WrongTarget, "token was issued for " + c.target + ", not " + expect.target);
  if (c.args_digest != expect.args_digest)
    return refuse(W::WrongArguments, "token was issued for a call with other arguments");
  return c;
}

}  // namespace mcpgw::saga
