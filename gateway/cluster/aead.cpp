#include "cluster/aead.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cstring>

namespace mcpgw::cluster {
namespace {

constexpr std::size_t kNonce = 12;
constexpr std::size_t kTag = 16;

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

std::array<unsigned char, 32> derive(std::string_view label, std::string_view secret) {
  std::string input = std::string(label) + "\n" + std::string(secret);
  std::array<unsigned char, 32> key{};
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), key.data());
  return key;
}

const unsigned char* bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

}  // namespace

Aead::Aead(const std::vector<std::string>& secrets, std::string_view key_label, std::string aad)
    : aad_(std::move(aad)),
      cipher_(EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr),
              [](void* c) { EVP_CIPHER_free(static_cast<EVP_CIPHER*>(c)); }) {
  for (const auto& s : secrets)
    keys_.push_back(Key{derive(key_label, s), derive(std::string(key_label) + " nonce", s)});
}

Result<std::string> Aead::seal(std::string_view plain, bool deterministic) const {
  std::string box(kNonce + plain.size() + kTag, '\0');
  auto* out = reinterpret_cast<unsigned char*>(box.data());
  const Key& key = keys_.front();
  if (deterministic) {
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    if (!HMAC(EVP_sha256(), key.nonce.data(), static_cast<int>(key.nonce.size()), bytes(plain), plain.size(), mac,
              &mac_len))
      return Error{"no nonce could be derived"};
    std::memcpy(out, mac, kNonce);
  } else if (RAND_bytes(out, kNonce) != 1) {
    return Error{"no random bytes for a nonce"};
  }
  EVP_CIPHER_CTX* ctx = scratch();
  int len = 0;
  bool ok = ctx && EVP_EncryptInit_ex(ctx, cipher(cipher_), nullptr, key.cipher.data(), out) == 1 &&
            EVP_EncryptUpdate(ctx, nullptr, &len, bytes(aad_), static_cast<int>(aad_.size())) == 1 &&
            EVP_EncryptUpdate(ctx, out + kNonce, &len, bytes(plain), static_cast<int>(plain.size())) == 1 &&
            EVP_EncryptFinal_ex(ctx, out + kNonce + len, &len) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, kTag, out + kNonce + plain.size()) == 1;
  if (!ok) return Error{"sealing failed"};
  return box;
}

std::optional<std::string> Aead::open(std::string_view box) const {
  if (box.size() < kNonce + kTag + 1) return std::nullopt;
  const auto* in = bytes(box);
  std::size_t n = box.size() - kNonce - kTag;
  std::string plain(n, '\0');
  auto* out = reinterpret_cast<unsigned char*>(plain.data());
  EVP_CIPHER_CTX* ctx = scratch();
  if (!ctx) return std::nullopt;
  for (const auto& key : keys_) {
    int len = 0;
    std::array<unsigned char, kTag> tag{};
    std::memcpy(tag.data(), in + kNonce + n, kTag);
    if (EVP_DecryptInit_ex(ctx, cipher(cipher_), nullptr, key.cipher.data(), in) == 1 &&
        EVP_DecryptUpdate(ctx, nullptr, &len, bytes(aad_), static_cast<int>(aad_.size())) == 1 &&
        EVP_DecryptUpdate(ctx, out, &len, in + kNonce, static_cast<int>(n)) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kTag, tag.data()) == 1 &&
        EVP_DecryptFinal_ex(ctx, out + len, &len) == 1)
      return plain;
  }
  return std::nullopt;
}

}  // namespace mcpgw::cluster
