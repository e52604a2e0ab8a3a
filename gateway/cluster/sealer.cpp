#include "cluster/sealer.hpp"

#include <chrono>

#include "util/base64.hpp"
#include "util/hex.hpp"

namespace mcpgw::cluster {
namespace {

constexpr std::string_view kPrefix = "m1";
constexpr std::size_t kNonce = Aead::kNonce;
constexpr std::size_t kTag = Aead::kTag;
constexpr std::uint8_t kFormat = 1;
/// Binds the ciphertext to its use: a sealed thing of another kind made
/// with the same secret does not open as a session.
constexpr std::string_view kAad = "mcpgw session v1";

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

// A key of its own for sessions: the same secret used elsewhere (e.g.
// sagas.secret) does not give the same key.
Sealer::Sealer(const std::vector<std::string>& secrets, std::int64_t ttl_s)
    : aead_("mcpgw cluster session key", secrets), ttl_s_(ttl_s) {}

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
  auto box = aead_.seal(plain, kAad);
  if (!box) return Error{"sealing the session failed: " + box.error()};
  return std::string(kPrefix) + base64url(*box);
}

std::optional<transport::SealedSession> Sealer::open(std::string_view id, std::int64_t now) const {
  // A sealed id is never longer than this: larger input is not worth a look.
  constexpr std::size_t kMaxId = kPrefix.size() + (kNonce + kMaxSealedBytes + kTag) * 4 / 3 + 4;
  if (id.size() > kMaxId || id.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  auto box = unbase64url(id.substr(kPrefix.size()));
  if (!box || box->size() < kNonce + kTag + 1) return std::nullopt;
  auto opened = aead_.open(*box, kAad);
  if (!opened) return std::nullopt;
  const std::string& plain = *opened;
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
