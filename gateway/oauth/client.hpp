#pragma once
// The gateway as an OAuth client of one upstream (servers[].oauth): where
// its authorization server is (discovered from the upstream's 401, RFC 9728,
// and the issuer's metadata, RFC 8414, unless configured), how the gateway
// authenticates there (a secret, private_key_jwt, or none with PKCE), and
// the tokens it holds: the gateway's own (client_credentials), each
// principal's (authorization_code, kept in the token store) or each
// principal's exchanged one (token_exchange, RFC 8693). Every token request
// carries the upstream as its RFC 8707 resource; tokens are renewed before
// they expire and once more when the upstream refuses one.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>

#include "config/config.hpp"
#include "oauth/assertion.hpp"
#include "oauth/fetch.hpp"
#include "oauth/store.hpp"
#include "oauth/wire.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::oauth {

/// Where a request to a provider failed: the contract's "step".
enum class Step { Discovery, Metadata, Registration, Token, Authorization };
std::string_view step_name(Step s);

/// Why there is no token, by kind (callers decide by it, never by text).
enum class Fault {
  ConsentRequired,  ///< authorization_code: the principal must consent (first time, or its refresh was refused)
  NoSubjectToken,   ///< token_exchange: the client came without an OAuth token of its own
  Failed,           ///< a provider is down, hangs, refuses or answers garbage
};

/// A failure with a message that names the provider (its URL) and the step.
struct Problem {
  Fault fault = Fault::Failed;
  std::string message;
};

/// The provider's endpoints for this upstream, as configured or discovered.
struct Endpoints {
  std::string issuer;  ///< "" when the endpoints were configured without one
  std::string token_endpoint;
  std::string authorization_endpoint;
  std::string registration_endpoint;
  std::string revocation_endpoint;
  /// The upstream as the RFC 8707 resource: its metadata's `resource`, or its url.
  std::string resource;
  /// What to ask for: the configured scopes, else the upstream's challenge's,
  /// else its metadata's scopes_supported.
  std::vector<std::string> scopes;
  std::vector<std::string> auth_methods;  ///< token_endpoint_auth_methods_supported
  bool cimd_supported = false;
};

/// A consent flow's link for a principal (authorization_code).
struct Consent {
  std::string url;  ///< the gateway's start page for this flow
  std::string elicitation_id;
};

/// What `mcpgw check` says of an OAuth upstream (never a token).
struct CheckReport {
  std::string discovery;    ///< where the endpoints are, or why discovery failed
  std::string credentials;  ///< whether the gateway's own credentials work
  bool discovered = true;   ///< false: `discovery` says why the endpoints were not found
  bool ok = true;
};

/// The gateway's own OAuth pages as browsers and providers reach them.
struct Links {
  std::string redirect_url;   ///< the callback
  std::string authorize_url;  ///< the consent links' start page
};

/// What the clients of all upstreams share (one per gateway).
struct Shared {
  Shared(transport::Io& i, std::shared_ptr<TokenStore> s, std::shared_ptr<const Vault> v, std::shared_ptr<const Aead> f)
      : io(i), store(std::move(s)), vault(std::move(v)), flows(std::move(f)) {}
  transport::Io& io;
  const std::shared_ptr<TokenStore> store;
  const std::shared_ptr<const Vault> vault;
  /// Seals the consent flows (the same key as the tokens, another purpose).
  const std::shared_ptr<const Aead> flows;

  Links links() const {
    util::MutexLock lk(mu_);
    return links_;
  }
  /// Set once the listener's address is known (before the first call).
  void set_links(Links l) {
    util::MutexLock lk(mu_);
    links_ = std::move(l);
  }

 private:
  mutable util::Mutex mu_;
  Links links_ GUARDED_BY(mu_);
};

/// A consent flow in flight, sealed into the link and the OAuth state.
struct Flow {
  std::string id;  ///< random; single use
  std::string server, principal, session, elicitation_id;
  std::string verifier;   ///< PKCE
  std::string client_id;  ///< the client the authorization request names
  std::int64_t created = 0;
  std::string browser;    ///< SHA-256 of the browser's cookie (in the state only)
};

class Client : public std::enable_shared_from_this<Client> {
 public:
  using Clock = std::chrono::steady_clock;
  /// What a call's step gets: a bearer ready to use, or why not.
  using Outcome = std::variant<std::string, Problem>;

  /// `server` must have `oauth`. Loads the private key, if any.
  static Result<std::shared_ptr<Client>> create(const config::Server& server, std::shared_ptr<Shared> shared);

  const std::string& server() const { return name_; }
  const config::ServerOAuth& config() const { return cfg_; }
  /// authorization_code and token_exchange: one identity per principal.
  bool per_principal() const { return cfg_.grant != config::ServerOAuth::Grant::ClientCredentials; }
  /// "client_credentials", "authorization_code" or "token_exchange".
  std::string_view grant_name() const;
  /// Who goes upstream for `principal`, for the audit log: the gateway's
  /// client_id for client_credentials, else the principal.
  std::string identity(const std::string& principal) const;

  /// The Authorization header value for `principal` ("" for the gateway's
  /// own identity), obtaining or renewing a token as needed. `rejected`: the
  /// header the upstream just refused (HTTP 401), renewed unless someone
  /// renewed it meanwhile.
  Task<Outcome> authorization(const std::string& principal, Clock::time_point deadline, CancelSignal* cancel,
                              const std::string& rejected = {});
  /// token_exchange: remembers the client's current token of `principal`
  /// (the subject of the next exchange); the previous one is forgotten.
  void set_subject(const std::string& principal, const std::string& subject_token);

  /// authorization_code: a new consent link for `principal`, asked in
  /// client session `session` ("" = none).
  Task<Result<Consent>> begin_consent(const std::string& principal, const std::string& session,
                                      Clock::time_point deadline, CancelSignal* cancel);
  /// Waits until `principal` has tokens (stored by any replica), `deadline`
  /// or `cancel`: true when it has, false when none came; an error when the
  /// provider refused the authorization of consent `elicitation_id` here.
  Task<Result<bool>> wait_for_tokens(const std::string& principal, const std::string& elicitation_id,
                                     Clock::time_point deadline, CancelSignal* cancel);
  /// The provider answered `flow`'s authorization with error `why` (the
  /// person declined, ...): a call waiting for that consent ends with it.
  void refused(const Flow& flow, const std::string& why);
  /// The redirect to the provider for `flow` (its start page), and the
  /// browser cookie's value that the callback must bring back.
  struct Redirect {
    std::string location;
    std::string cookie;
  };
  Task<Result<Redirect>> authorize(Flow flow, Clock::time_point deadline);
  /// The callback of `flow` with `code`: exchanges it and stores the tokens.
  Task<Result<void>> complete(const Flow& flow, const std::string& code, Clock::time_point deadline);
  /// Forgets `principal`'s tokens (here and in the store) and asks the
  /// provider to revoke them (RFC 7009) when it offers that; true when
  /// there were any.
  Task<Result<bool>> revoke(const std::string& principal, Clock::time_point deadline);
  /// Another process changed the stored record `key`: the cached copy goes.
  void changed_elsewhere(const std::string& key);

  /// Discovery and a probe of the gateway's own credentials (`mcpgw check`).
  Task<CheckReport> check(Clock::time_point deadline);
  /// The endpoints, discovering them (once; a failure is tried again next time).
  Task<Result<Endpoints>> endpoints(Clock::time_point deadline, CancelSignal* cancel);

  Client(const config::Server& server, std::shared_ptr<Shared> shared,
         std::shared_ptr<const SigningKey> key);

 private:
  /// A token for `principal`, from the cache or the store when fresh enough,
  /// else newly obtained (one request at a time per principal).
  Task<std::variant<Tokens, Problem>> tokens_for(const std::string& principal, Clock::time_point deadline,
                                                 CancelSignal* cancel, const std::string& rejected);
  Task<std::variant<Tokens, Problem>> obtain(const std::string& principal, const std::optional<Tokens>& held,
                                             Clock::time_point deadline, CancelSignal* cancel);
  Task<std::variant<Tokens, Problem>> refresh(const std::string& principal, const Tokens& held,
                                              Clock::time_point deadline, CancelSignal* cancel);
  /// POSTs a token request with the client's authentication and the
  /// resource; the tokens, or the provider's error (`oauth_error`: its
  /// `error` code, "" when the answer was no OAuth error at all).
  struct TokenFailure {
    std::string oauth_error;
    std::string message;
  };
  Task<std::variant<Tokens, TokenFailure>> token_request(Params params, const std::string& client_id,
                                                         const Endpoints& ep, Clock::time_point deadline,
                                                         CancelSignal* cancel);
  /// The principal's stored tokens (authorization_code), cached.
  Task<Result<std::optional<Tokens>>> stored(const std::string& principal);
  Task<Result<void>> keep(const std::string& principal, const Tokens& t);
  Task<Result<void>> forget(const std::string& principal);
  /// The client id to use: configured, the CIMD URL, or registered (RFC 7591).
  Task<Result<std::string>> client_id(const Endpoints& ep, Clock::time_point deadline, CancelSignal* cancel);
  Task<Result<Endpoints>> discover(Clock::time_point deadline, CancelSignal* cancel);
  /// GET `url` for a JSON document.
  Task<Result<HttpAnswer>> get_json(const std::string& url, Clock::time_point deadline, CancelSignal* cancel);
  Task<Result<ServerMetadata>> server_metadata(const std::string& issuer, Clock::time_point deadline,
                                               CancelSignal* cancel);
  /// "OAuth <step> failed at <url>: <why>".
  static std::string failed(Step step, const std::string& url, const std::string& why);
  /// True when `t` is still good for a while (renewed before it expires).
  static bool fresh(const Tokens& t);

  const std::string name_;
  const std::string url_;
  const config::ServerOAuth cfg_;
  const std::shared_ptr<Shared> shared_;
  const std::shared_ptr<const SigningKey> key_;
  Fetcher fetch_;

  util::Mutex mu_;
  Event changed_;  ///< tokens changed, a renewal ended, discovery ended (a lock of its own)
  std::optional<Endpoints> endpoints_ GUARDED_BY(mu_);
  bool discovering_ GUARDED_BY(mu_) = false;
  std::string registered_client_ GUARDED_BY(mu_);  ///< RFC 7591, this process's
  std::map<std::string, Tokens> cache_ GUARDED_BY(mu_);       ///< by principal
  std::map<std::string, std::string> subjects_ GUARDED_BY(mu_);  ///< token_exchange: by principal
  std::set<std::string> renewing_ GUARDED_BY(mu_);            ///< principals with a token request in flight
  /// Consents the provider refused, by elicitation id: why (a few, recent).
  std::map<std::string, std::string> refusals_ GUARDED_BY(mu_);
};

}  // namespace mcpgw::oauth
