#include "cluster/sealer.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <chrono>
#include <cstring>
#include <memory>

#include "util/base64.hpp"
#include "util/hex.hpp"

namespace mcpgw::cluster {
namespace {

constexpr std::string_view kPrefix = "m1";
constexpr std::size_t kNonce = 12;
constexpr std::size_t kTag = 16;
constexpr std::uint8_t kFormat = 1;
/// Binds the ciphertext to its use: a sealed thing of another kind made
/// with the same secret does not open as a session.
constexpr std::string_view kAad = "mcpgw session v1";

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

/// This thread's cipher context. Scratch space only: every use begins with
/// a full init (cipher, key, nonce), so nothing carries from one id to the
/// next; allocating one per id cost a third of the time.
EVP_CIPHER_CTX* scratch() {
  thread_local CipherCtx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  return ctx.get();
}

/// The fetched cipher, or OpenSSL's built-in one should the fetch have failed.
const EVP_CIPHER* cipher(const std::shared_ptr<void>& fetched) {
  return fetched ? static_cast<const EVP_CIPHER*>(fetched.get()) : EVP_aes_256_gcm();
}

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_field(std::string& out, std::string_view f) {
  put_u32(out, static_cast<std::uint32_t>(f.size()));
  out.append(f);
}

/// Reads the plaintext's fields back; nullopt when it is not one.
struct Reader {
  std::string_view in;
  bool ok = true;
  std::uint64_t u(int bytes) {
    if (in.size() < static_cast<std::size_t>(bytes)) {
      ok = false;
      return 0;
    }
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(in[static_cast<std::size_t>(i)]);
    in.remove_prefix(static_cast<std::size_t>(bytes));
    return v;
  }
  std::string field() {
    auto n = u(4);
    if (!ok || in.size() < n) {
      ok = false;
      return {};
    }
    std::string f(in.substr(0, n));
    in.remove_prefix(n);
    return f;
  }
};

}  // namespace

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string digest_of(std::string_view id) {
  // 128 bits: no collision among any number of live sessions.
  return sha256_hex(id, 16);
}

Sealer::Sealer(const std::vector<std::string>& secrets, std::int64_t ttl_s)
    : ttl_s_(ttl_s),
      cipher_(EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr),
              [](void* c) { EVP_CIPHER_free(static_cast<EVP_CIPHER*>(c)); }) {
  for (const auto& s : secrets) {
    // A key of its own for sessions: the same secret used elsewhere (e.g.
    // sagas.secret) does not give the same key.
    std::string input = "mcpgw cluster session key\n" + s;
    std::array<unsigned char, 32> key{};
    SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), key.data());
    keys_.push_back(key);
  }
}

Result<std::string> Sealer::seal(const transport::SealedSession& s) const {
  std::string plain;
  plain.reserve(64 + s.principal.size() + s.mode.size() + s.capabilities.size() + s.client_info.size());
  plain.push_back(static_cast<char>(kFormat));
  for (int i = 7; i >= 0; --i) plain.push_back(static_cast<char>((static_cast<std::uint64_t>(s.created) >> (8 * i)) & 0xff));
  put_field(plain, s.principal);
  put_field(plain, s.mode);
  put_field(plain, s.protocol_version);
  put_field(plain, s.capabilities);
  put_field(plain, s.client_info);
  if (plain.size() > kMaxSealedBytes)
    return Error{"the client's capabilities and clientInfo take " + std::to_string(plain.size()) +
                 " bytes; a session id holds at most " + std::to_string(kMaxSealedBytes)};
  std::string box(kNonce + plain.size() + kTag, '\0');
  auto* out = reinterpret_cast<unsigned char*>(box.data());
  if (RAND_bytes(out, kNonce) != 1) return Error{"no random bytes for a nonce"};
  EVP_CIPHER_CTX* ctx = scratch();
  int len = 0;
  bool ok = ctx && EVP_EncryptInit_ex(ctx, cipher(cipher_), nullptr, keys_.front().data(), out) == 1 &&
            EVP_EncryptUpdate(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(kAad.data()),
                              static_cast<int>(kAad.size())) == 1 &&
            EVP_EncryptUpdate(ctx, out + kNonce, &len, reinterpret_cast<const unsigned char*>(plain.data()),
                              static_cast<int>(plain.size())) == 1 &&
            EVP_EncryptFinal_ex(ctx, out + kNonce + len, &len) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, kTag, out + kNonce + plain.size()) == 1;
  if (!ok) return Error{"sealing the session failed"};
  return std::string(kPrefix) + base64url(box);
}

std::optional<transport::SealedSession> Sealer::open(std::string_view id, std::int64_t now) const {
  // A sealed id is never longer than this: larger input is not worth a look.
  constexpr std::size_t kMaxId = kPrefix.size() + (kNonce + kMaxSealedBytes + kTag) * 4 / 3 + 4;
  if (id.size() > kMaxId || id.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  auto box = unbase64url(id.substr(kPrefix.size()));
  if (!box || box->size() < kNonce + kTag + 1) return std::nullopt;
  const auto* in = reinterpret_cast<const unsigned char*>(box->data());
  std::size_t n = box->size() - kNonce - kTag;
  std::string plain(n, '\0');
  auto* out = reinterpret_cast<unsigned char*>(plain.data());
  bool opened = false;
  EVP_CIPHER_CTX* ctx = scratch();
  if (!ctx) return std::nullopt;
  for (const auto& key : keys_) {
    int len = 0;
    std::array<unsigned char, kTag> tag{};
    std::memcpy(tag.data(), in + kNonce + n, kTag);
    if (EVP_DecryptInit_ex(ctx, cipher(cipher_), nullptr, key.data(), in) == 1 &&
        EVP_DecryptUpdate(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(kAad.data()),
                          static_cast<int>(kAad.size())) == 1 &&
        EVP_DecryptUpdate(ctx, out, &len, in + kNonce, static_cast<int>(n)) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kTag, tag.data()) == 1 &&
        EVP_DecryptFinal_ex(ctx, out + len, &len) == 1) {
      opened = true;
      break;
    }
  }
  if (!opened) return std::nullopt;
  Reader r{plain};
  if (r.u(1) != kFormat) return std::nullopt;
  transport::SealedSession s;
  s.created = static_cast<std::int64_t>(r.u(8));
  s.principal = r.field();
  s.mode = r.field();
  s.protocol_version = r.field();
  s.capabilities = r.field();
  s.client_info = r.field();
  if (!r.ok || !r.in.empty()) return std::nullopt;
  if (s.created > now + 60 || now - s.created > ttl_s_) return std::nullopt;
  return s;
}

}  // namespace mcpgw::cluster
