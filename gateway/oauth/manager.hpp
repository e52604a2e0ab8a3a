#pragma once
// Every upstream's OAuth client and what they share (the token store, the
// keys, the gateway's own links), and the gateway's OAuth pages: the start
// page of a consent link, the callback providers send browsers back to, a
// Client ID Metadata Document, and revocation.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "oauth/client.hpp"
#include "oauth/flow.hpp"
#include "transport/http_listener.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::oauth {

class Manager {
 public:
  /// Hears what the pages did; called from I/O threads, must not block.
  struct Hooks {
    /// `flow`'s principal consented (its tokens are stored).
    std::function<void(const Flow& flow)> consented;
    /// `principal`'s tokens for `server` were revoked.
    std::function<void(const std::string& server, const std::string& principal)> revoked;
  };

  /// The clients of `cfg`'s servers with oauth, over `store` (where tokens of
  /// grant authorization_code rest). The keys are upstream_oauth.key or
  /// cluster.secret, else a key of this process. An error names what cannot
  /// be loaded (a private key file).
  static Result<std::unique_ptr<Manager>> create(const config::Config& cfg, transport::Io& io,
                                                 std::shared_ptr<TokenStore> store);
  Manager(transport::Io& io, std::shared_ptr<Shared> shared);

  void set_hooks(Hooks hooks);
  /// Where the pages are, once the listener is bound: upstream_oauth's
  /// redirect_url, else http(s)://<host>:<port>/oauth/callback.
  void set_address(const config::Config& cfg, const std::string& host, int port, bool tls);
  /// Applies `cfg` (start, reload): a server whose settings are unchanged
  /// keeps its client (and its tokens and discovery), others get new ones.
  /// An error (nothing applied) names what cannot be loaded.
  Result<void> configure(const config::Config& cfg);
  /// The client of server `name`; null when it has no oauth.
  std::shared_ptr<Client> find(const std::string& name) const;
  /// Every client, by server name.
  std::map<std::string, std::shared_ptr<Client>> clients() const;
  /// True when some server uses grant authorization_code (the pages matter).
  bool consents() const;

  /// GET /oauth/authorize?flow=...: the redirect to the provider.
  Task<transport::http::Response> authorize_page(const transport::http::Request& req);
  /// GET /oauth/callback?code=...&state=...: the tokens are stored.
  Task<transport::http::Response> callback_page(const transport::http::Request& req);
  /// The paths of the configured Client ID Metadata Documents.
  std::vector<std::string> metadata_paths() const;
  /// GET of such a path: the document (draft-ietf-oauth-client-id-metadata-document).
  transport::http::Response metadata_document(std::string_view path) const;
  /// Drops `principal`'s tokens at `server` ("" = every server); the
  /// servers that had some.
  Task<Result<std::vector<std::string>>> revoke(const std::string& principal, const std::string& server);

 private:
  /// The store told of a record changed by another process.
  void changed_elsewhere(const std::string& key);

  transport::Io& io_;
  std::shared_ptr<Shared> shared_;
  mutable util::Mutex mu_;
  Hooks hooks_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Client>> clients_ GUARDED_BY(mu_);
  std::map<std::string, config::Server> configs_ GUARDED_BY(mu_);  ///< what each client was made from
};

/// The default callback: http(s)://<host>:<port>/oauth/callback.
std::string default_redirect_url(const std::string& host, int port, bool tls);

}  // namespace mcpgw::oauth
