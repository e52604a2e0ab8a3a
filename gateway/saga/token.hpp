#pragma once
// Signed, self-contained tokens: the MRTR `requestState` the gateway hands a
// 2026-07-28 client and the saga tokens of tools/callSaga. Whatever a later
// request needs to continue travels inside the token, so any gateway process
// holding the same secret can continue it, and nothing a client sends back
// is trusted before its HMAC-SHA256 checks out.
//
// Format: "mcpgw1." base64url(payload JSON) "." base64url(HMAC-SHA256 over
// everything before the second dot).
#include <chrono>
#include <cstdint>
#include <optional>
#include <variant>
#include <string>
#include <string_view>
#include <vector>

#include "jsonrpc/json.hpp"
#include "util/result.hpp"

namespace mcpgw::saga {

/// Tokens longer than this are refused unread (and never issued): a client
/// echoes them in every retry, and a verifier must not hash megabytes on a
/// stranger's say-so.
inline constexpr std::size_t kMaxTokenBytes = 64 * 1024;

/// What a token vouches for.
struct Claims {
  std::string kind;         ///< "mrtr" or "saga": one kind is never accepted as the other
  std::string principal;    ///< the client it was issued to ("" without auth)
  std::string target;       ///< what it continues, e.g. "tools/call bank:transfer"
  std::string args_digest;  ///< digest() of the original request's arguments
  std::string id;           ///< unique per token (set by seal)
  std::int64_t expires = 0; ///< unix seconds (set by seal)
  json::Document state{rapidjson::kObjectType};  ///< what the continuation needs
};

/// Why a token was refused; `message` is for the client.
struct Refusal {
  enum class Why { Malformed, TooLarge, Signature, Expired, WrongKind, WrongPrincipal, WrongTarget, WrongArguments };
  Why why;
  std::string message;
};

/// The keys tokens are signed and checked with: the first signs, every one
/// verifies, so a secret can be rotated without failing tokens in flight.
class Keyring {
 public:
  /// No secrets: one random key for this process, so tokens do not outlive
  /// it (the gateway logs that at start).
  Keyring(std::vector<std::string> secrets, std::chrono::seconds ttl);

  /// True when the key is the random per-process one.
  bool ephemeral() const { return ephemeral_; }
  std::chrono::seconds ttl() const { return ttl_; }

  /// Signs `c` after giving it a fresh id and an expiry `ttl` from now.
  /// An error when the token would exceed kMaxTokenBytes.
  Result<std::string> seal(Claims c) const;

  /// Verifies `token` and that it was issued for `expect`'s kind, principal,
  /// target and arguments (not checked when `expect.target` is empty: the
  /// token then names them); the claims, or why not.
  std::variant<Claims, Refusal> open(std::string_view token, const Claims& expect) const;

 private:
  std::string mac(std::string_view key, std::string_view data) const;
  std::vector<std::string> keys_;
  std::chrono::seconds ttl_;
  bool ephemeral_ = false;
};

/// Hex SHA-256 of `v`'s compact JSON text (of "null" for nullptr): binds a
/// token to the arguments it was issued for.
std::string digest(const json::Value* v);

}  // namespace mcpgw::saga
