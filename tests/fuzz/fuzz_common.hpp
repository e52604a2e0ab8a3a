#pragma once
// What the fuzz targets and the seed generator share: the fixed keys, the
// claims a token is opened against, the harness's own signer, the mode bits
// carried by an input's first byte, and a check that crashes on purpose.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "jsonrpc/json.hpp"
#include "saga/token.hpp"
#include "util/base64.hpp"

namespace mcpgw::fuzz {

/// A property the code under test broke: reported as a crash (libFuzzer
/// saves the input as an artifact).
#define MCPGW_FUZZ_CHECK(cond, what)                                                                \
  do {                                                                                              \
    if (!(cond)) {                                                                                  \
      std::fprintf(stderr, "fuzz check failed: %s (%s) at %s:%d\n", what, #cond, __FILE__, __LINE__); \
      std::abort();                                                                                 \
    }                                                                                               \
  } while (0)

// fuzz_token: first byte of an input.
inline constexpr std::uint8_t kSignPayload = 1;  ///< set: the rest is a payload the harness signs; clear: a raw token
inline constexpr std::uint8_t kOldKey = 2;       ///< sign with the second (rotated-out) key
inline constexpr std::uint8_t kSagaKind = 4;     ///< expect a "saga" token instead of an "mrtr" one
inline constexpr std::uint8_t kAnyTarget = 8;    ///< expect no target nor arguments (a saga's resume)

// fuzz_era: first byte of an input, modulo 3.
inline constexpr std::uint8_t kHeaderValue = 0;  ///< the rest is an Mcp-Name / Mcp-Param-* header value
inline constexpr std::uint8_t kMessage = 1;      ///< the rest is a JSON-RPC body (optionally "VERSION\n" first)
inline constexpr std::uint8_t kBase64 = 2;       ///< the rest is base64 text or bytes
inline constexpr std::uint8_t kWithHeader = 4;   ///< kMessage: the first line is the MCP-Protocol-Version header

/// The keyring's secrets: the first signs, both verify.
inline const std::array<std::string, 2> kKeys = {"fuzz-key-current-0123456789abcdef", "fuzz-key-rotated-fedcba9876543210"};

inline const saga::Keyring& keyring() {
  static const saga::Keyring k({kKeys[0], kKeys[1]}, std::chrono::seconds(900));
  return k;
}

/// The arguments the expected claims are bound to.
inline constexpr std::string_view kArguments = R"({"accountId":"A-1","amount":5})";

/// What every token is opened against: the kind and, unless `any_target`,
/// the target and arguments.
inline const saga::Claims& expected(bool saga, bool any_target = false) {
  static const auto make = [](const char* kind, bool any) {
    saga::Claims c;
    c.kind = kind;
    c.principal = "alice";
    if (!any) {
      c.target = "tools/call bank:transfer";
      auto args = json::parse(kArguments);
      c.args_digest = saga::digest(&*args);
    }
    return c;
  };
  static const saga::Claims all[2][2] = {{make("mrtr", false), make("mrtr", true)},
                                         {make("saga", false), make("saga", true)}};
  return all[saga][any_target];
}

/// "mcpgw1." base64url(payload) "." base64url(HMAC-SHA256(key, what precedes the dot)):
/// the token format, written independently of saga::Keyring.
inline std::string sign(std::string_view payload, const std::string& key) {
  std::string token = "mcpgw1." + base64url(payload);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(token.data()),
       token.size(), md, &len);
  return token + "." + base64url(std::string_view(reinterpret_cast<const char*>(md), len));
}

}  // namespace mcpgw::fuzz
