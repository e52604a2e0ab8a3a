#include "cluster/sealer.hpp"

#include <chrono>

#include "cluster/sealed_fields.hpp"
#include "util/base64.hpp"
#include "util/hex.hpp"

namespace mcpgw::cluster {
namespace {

constexpr std::string_view kPrefix = "m1";
constexpr std::uint8_t kFormat = 1;
/// Binds the ciphertext to its use: a sealed thing of another kind made
/// with the same secret does not open as a session.
constexpr std::string_view kAad = "mcpgw session v1";

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
  FieldWriter w(kFormat);
  w.u64(static_cast<std::uint64_t>(s.created))
      .text(s.principal)
      .text(s.mode)
      .text(s.protocol_version)
      .text(s.capabilities)
      .text(s.client_info);
  if (w.plain().size() > kMaxSealedBytes)
    return Error{"the client's capabilities and clientInfo take " + std::to_string(w.plain().size()) +
                 " bytes; a session id holds at most " + std::to_string(kMaxSealedBytes)};
  auto box = aead_.seal(w.plain(), kAad);
  if (!box) return Error{"sealing the session failed: " + box.error()};
  return std::string(kPrefix) + base64url(*box);
}

std::optional<transport::SealedSession> Sealer::open(std::string_view id, std::int64_t now) const {
  // A sealed id is never longer than this: larger input is not worth a look.
  constexpr std::size_t kMaxId = kPrefix.size() + (Aead::kOverhead + kMaxSealedBytes) * 4 / 3 + 4;
  if (id.size() > kMaxId || id.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  auto box = unbase64url(id.substr(kPrefix.size()));
  auto plain = box ? aead_.open(*box, kAad) : std::nullopt;
  if (!plain) return std::nullopt;
  FieldReader r(*plain, kFormat);
  transport::SealedSession s;
  s.created = static_cast<std::int64_t>(r.u64());
  s.principal = r.text();
  s.mode = r.text();
  s.protocol_version = r.text();
  s.capabilities = r.text();
  s.client_info = r.text();
  if (!r.done()) return std::nullopt;
  if (s.created > now + 60 || now - s.created > ttl_s_) return std::nullopt;
  return s;
}

}  // namespace mcpgw::cluster
