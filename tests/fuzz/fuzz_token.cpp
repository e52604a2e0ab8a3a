// libFuzzer target: the signed-token decoder, saga::Keyring::open, and the
// base64url and JSON parsing under it. The first byte of an input picks the
// mode (fuzz_common.hpp; its other bits pick the key and the claims expected:
// the kind, and whether a target and arguments are, as a saga's resume has none):
//   kSignPayload clear: the rest is a token exactly as a client sends it
//     (size limit, prefix, dots, base64url of the MAC, the MAC check);
//   kSignPayload set: the rest is a payload that the harness signs with one
//     of the keyring's keys (kOldKey: the rotated-out one) before opening it,
//     so mutations reach what lies behind the signature: the payload's
//     base64url, the JSON parser and every claim check.
// Besides sanitizer reports, a crash is any broken property: a harness-signed
// token refused for its signature; a token accepted that does not carry the
// expected claims, or that is not byte for byte what signing its payload
// gives (no malleable encodings); claims that do not survive seal -> open.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "fuzz_common.hpp"

using namespace mcpgw;

namespace {

std::int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t mode = data[0];
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const saga::Keyring& ring = fuzz::keyring();
  const saga::Claims& expect = fuzz::expected(mode & fuzz::kSagaKind, mode & fuzz::kAnyTarget);
  const bool signed_here = mode & fuzz::kSignPayload;
  const std::string token = signed_here ? fuzz::sign(rest, fuzz::kKeys[(mode & fuzz::kOldKey) ? 1 : 0]) : std::string(rest);
  auto opened = ring.open(token, expect);
  if (const auto* r = std::get_if<saga::Refusal>(&opened)) {
    MCPGW_FUZZ_CHECK(!r->message.empty(), "a refusal without a message");
    MCPGW_FUZZ_CHECK(!signed_here || r->why != saga::Refusal::Why::Signature,
                     "a token signed with a keyring key was refused for its signature");
    return 0;
  }
  const saga::Claims& c = std::get<saga::Claims>(opened);
  MCPGW_FUZZ_CHECK(c.kind == expect.kind && c.principal == expect.principal, "a token accepted for another kind or principal");
  MCPGW_FUZZ_CHECK(expect.target.empty() || (c.target == expect.target && c.args_digest == expect.args_digest),
                   "a token accepted for another target or other arguments");
  MCPGW_FUZZ_CHECK(c.expires >= now_s() - 1, "an expired token accepted");

  // Accepted means signed by us: the token must be exactly what signing its
  // payload with one of the keys gives (base64url is canonical both ways).
  const std::size_t dot = token.rfind('.');
  MCPGW_FUZZ_CHECK(dot != std::string::npos && dot >= 7, "an accepted token without its two dots");
  auto payload = unbase64url(std::string_view(token).substr(7, dot - 7));
  MCPGW_FUZZ_CHECK(payload.has_value(), "an accepted token whose payload is not base64url");
  MCPGW_FUZZ_CHECK(token == fuzz::sign(*payload, fuzz::kKeys[0]) || token == fuzz::sign(*payload, fuzz::kKeys[1]),
                   "an accepted token that differs from its payload signed (malleable encoding)");

  // What open returns must survive seal -> open unchanged.
  saga::Claims copy;
  copy.kind = c.kind;
  copy.principal = c.principal;
  copy.target = c.target;
  copy.args_digest = c.args_digest;
  copy.state.CopyFrom(c.state, copy.state.GetAllocator());
  auto sealed = ring.seal(std::move(copy));
  if (!sealed) return 0;  // over kMaxTokenBytes once re-encoded
  auto again = ring.open(*sealed, expect);
  const auto* c2 = std::get_if<saga::Claims>(&again);
  MCPGW_FUZZ_CHECK(c2 != nullptr, "a freshly sealed token refused");
  MCPGW_FUZZ_CHECK(c2->kind == c.kind && c2->principal == c.principal && c2->target == c.target &&
                       c2->args_digest == c.args_digest,
                   "claims changed through seal -> open");
  // The state is not compared to the last bit: RapidJSON's default number
  // parser may land one ulp off a written double (its full-precision one is
  // exact but crashes on some inputs), so only its shape must survive.
  MCPGW_FUZZ_CHECK(c2->state.IsObject() == c.state.IsObject() &&
                       (!c.state.IsObject() || c2->state.MemberCount() == c.state.MemberCount()),
                   "state changed shape through seal -> open");
  return 0;
}
