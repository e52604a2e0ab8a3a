#pragma once
// Who a request comes from: the static bearer tokens and the OAuth 2.1
// resource server's JWT checks (issuer, audience, expiry, scopes, the
// principal and the modes its scopes open). Pure: the keys are handed in,
// so nothing here does I/O and one policy serves every thread.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/jwks.hpp"
#include "jsonrpc/json.hpp"

namespace mcpgw::auth {

/// A static bearer token and the principal it authenticates.
struct BearerCredential {
  std::string token;
  std::string principal;
  std::vector<std::string> modes;  ///< empty = any
  bool operator==(const BearerCredential&) const = default;
};

/// `auth.oauth`, as the verifier needs it.
struct OAuthSettings {
  std::string issuer;
  std::string audience;
  std::string jwks_url;   ///< one of jwks_url and jwks_file is set
  std::string jwks_file;
  std::vector<std::string> authorization_servers;
  std::vector<std::string> required_scopes;
  /// scope -> the modes it opens; empty = every scope opens every mode.
  std::vector<std::pair<std::string, std::vector<std::string>>> scope_modes;
  std::string principal_claim = "sub";
  int leeway_s = 60;
  bool operator==(const OAuthSettings&) const = default;
};

/// The whole `auth` section.
struct AccessSettings {
  bool enabled = false;  ///< false: every request is anonymous and admitted
  std::vector<BearerCredential> bearer_tokens;
  std::optional<OAuthSettings> oauth;
  /// The mode of a client that names none (to check it against scopes).
  std::string default_mode = "all";
  bool operator==(const AccessSettings&) const = default;
};

/// What the check of one request found.
struct Verdict {
  enum class Outcome {
    Admitted,           ///< `principal` and `modes` are set
    Anonymous,          ///< auth is off
    Missing,            ///< no credentials: 401 pointing at the metadata
    Invalid,            ///< 401 invalid_token, `description` says why
    InsufficientScope,  ///< 403 insufficient_scope; `scope` lists what is needed
    UnknownKey,         ///< the token's kid is not in the keys: refetch them, then check again
  };
  Outcome outcome = Outcome::Anonymous;
  std::string principal;
  std::vector<std::string> modes;  ///< modes the principal may use; empty = any
  std::string description;
  std::string scope;
  bool oauth = false;  ///< the credential was (or looked like) a JWT
  /// An admitted JWT's claims and scopes, for policies (shared: verdicts are cached and copied).
  std::shared_ptr<const json::Document> claims;
  std::vector<std::string> scopes;
  /// For an admitted JWT: until when (Unix seconds, leeway included) the
  /// verdict holds.
  std::int64_t valid_until = 0;
};

/// A token's scopes: its `scope` string (RFC 8693) or its `scp` array.
std::vector<std::string> scopes_of(const json::Value& claims);

/// Checks Authorization headers under one AccessSettings.
class Verifier {
 public:
  explicit Verifier(AccessSettings s) : s_(std::move(s)) {}
  const AccessSettings& settings() const { return s_; }
  /// Checks `authorization` (the header's value, "" when absent) for a
  /// request to `mode` ("" = the default mode) at `now_s` (Unix seconds).
  /// `keys` may be null when no JWKS has been read yet.
  Verdict check(std::string_view authorization, std::string_view mode, const KeySet* keys,
                std::int64_t now_s) const;
  /// The first half of check(): who the credentials are (and the modes
  /// they may use), without looking at the mode asked for.
  Verdict identify(std::string_view authorization, const KeySet* keys, std::int64_t now_s) const;
  /// The second half: refuses (InsufficientScope) an admitted `v` for a
  /// mode it may not use.
  void restrict_to_mode(Verdict& v, std::string_view mode) const;
  /// Checks a JWT alone (the part of check() after the bearer tokens).
  Verdict check_jwt(std::string_view token, const KeySet* keys, std::int64_t now_s) const;
  /// The scopes a request for `mode` needs beyond the required ones (the
  /// scopes that open it), space-separated; "" when any scope does.
  std::string scopes_for_mode(std::string_view mode) const;

 private:
  AccessSettings s_;
};

}  // namespace mcpgw::auth
