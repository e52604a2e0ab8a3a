#include "util/aead.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cstring>

namespace mcpgw {
namespace {

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

/// This thread's cipher context. Scratch space only: every use begins with
/// a full init (cipher, key, nonce), so nothing carries from one box to the
/// next; allocating one per box cost a third of the time.
EVP_CIPHER_CTX* scratch() {
  thread_local CipherCtx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  return ctx.get();
}

/// The fetched cipher, or OpenSSL's built-in one should the fetch have failed.
const EVP_CIPHER* cipher(const std::shared_ptr<void>& fetched) {
  return fetched ? static_cast<const EVP_CIPHER*>(fetched.get()) : EVP_aes_256_gcm();
}

const unsigned char* bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

Aead::Key derive(std::string_view purpose, std::string_view secret) {
  std::string input = std::string(purpose) + "\n" + std::string(secret);
  Aead::Key key{};
  SHA256(bytes(input), input.size(), key.data());
  return key;
}

}  // namespace

Aead::Aead(std::string_view purpose, const std::vector<std::string>& secrets)
    : purpose_(purpose), secrets_(secrets) {}

const Aead::Keys& Aead::keys() const {
  std::call_once(derived_, [this] {
    keys_.cipher = std::shared_ptr<void>(EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr),
                                         [](void* c) { EVP_CIPHER_free(static_cast<EVP_CIPHER*>(c)); });
    for (const auto& s : secrets_) {
      keys_.keys.push_back(derive(purpose_, s));
      keys_.nonce_keys.push_back(derive(purpose_ + " nonce", s));
    }
    secrets_.clear();
  });
  return keys_;
}

Result<std::string> Aead::seal(std::string_view plain, std::string_view aad, Nonce nonce) const {
  const Keys& k = keys();
  if (k.keys.empty()) return Error{"AES-256-GCM sealing failed: no key"};
  std::string box(kNonce + plain.size() + kTag, '\0');
  auto* out = reinterpret_cast<unsigned char*>(box.data());
  if (nonce == Nonce::Synthetic) {
    const Key& nk = k.nonce_keys.front();
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    if (!HMAC(EVP_sha256(), nk.data(), static_cast<int>(nk.size()), bytes(plain), plain.size(), mac, &mac_len))
      return Error{"no nonce could be derived"};
    std::memcpy(out, mac, kNonce);
  } else if (RAND_bytes(out, kNonce) != 1) {
    return Error{"no random bytes for a nonce"};
  }
  EVP_CIPHER_CTX* ctx = scratch();
  int len = 0;
  bool ok = ctx && EVP_EncryptInit_ex(ctx, cipher(k.cipher), nullptr, k.keys.front().data(), out) == 1 &&
            EVP_EncryptUpdate(ctx, nullptr, &len, bytes(aad), static_cast<int>(aad.size())) == 1 &&
            EVP_EncryptUpdate(ctx, out + kNonce, &len, bytes(plain), static_cast<int>(plain.size())) == 1 &&
            EVP_EncryptFinal_ex(ctx, out + kNonce + len, &len) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, kTag, out + kNonce + plain.size()) == 1;
  if (!ok) return Error{"AES-256-GCM sealing failed"};
  return box;
}

std::optional<std::string> Aead::open(std::string_view box, std::string_view aad) const {
  if (box.size() < kNonce + kTag) return std::nullopt;
  const unsigned char* in = bytes(box);
  std::size_t n = box.size() - kNonce - kTag;
  std::string plain(n, '\0');
  auto* out = reinterpret_cast<unsigned char*>(plain.data());
  EVP_CIPHER_CTX* ctx = scratch();
  if (!ctx) return std::nullopt;
  const Keys& k = keys();
  for (const auto& key : k.keys) {
    int len = 0;
    std::array<unsigned char, kTag> tag{};
    std::memcpy(tag.data(), in + kNonce + n, kTag);
    if (EVP_DecryptInit_ex(ctx, cipher(k.cipher), nullptr, key.data(), in) == 1 &&
        EVP_DecryptUpdate(ctx, nullptr, &len, bytes(aad), static_cast<int>(aad.size())) == 1 &&
        EVP_DecryptUpdate(ctx, out, &len, in + kNonce, static_cast<int>(n)) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kTag, tag.data()) == 1 &&
        EVP_DecryptFinal_ex(ctx, out + len, &len) == 1)
      return plain;
  }
  return std::nullopt;
}

}  // namespace mcpgw
