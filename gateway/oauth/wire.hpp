#pragma once
// What OAuth puts on the wire, read and written without I/O: form and
// query encoding, the Bearer challenge of a 401 (RFC 6750, RFC 9728 §5.1),
// the well-known metadata URLs (RFC 9728 §3.1, RFC 8414 §3.1 and the MCP
// authorization spec's order), the metadata documents, token responses
// (RFC 6749 §5) and PKCE (RFC 7636).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace mcpgw::oauth {

using Params = std::vector<std::pair<std::string, std::string>>;

/// Percent-encodes everything but RFC 3986's unreserved characters.
std::string url_encode(std::string_view s);
/// application/x-www-form-urlencoded of `params`, in their order.
std::string form_encode(const Params& params);
/// The pairs of a query string or form body ('+' is a space); a pair that
/// does not decode is dropped.
Params parse_query(std::string_view query);
/// The value of `name` in `params`; nullopt when absent.
std::optional<std::string> param(const Params& params, std::string_view name);
/// The value of cookie `name` in a Cookie header; "" when absent.
std::string cookie(std::string_view header, std::string_view name);

/// The parameters of a `Bearer` challenge in a WWW-Authenticate header.
struct Challenge {
  std::string resource_metadata;  ///< RFC 9728 §5.1
  std::string scope;              ///< RFC 6750 §3
  std::string error;
};
/// The Bearer challenge of `header`; nullopt when it has none.
std::optional<Challenge> parse_challenge(std::string_view header);

/// Where a resource's protected resource metadata may be (RFC 9728 §3.1):
/// with the resource's path inserted, then at the root.
std::vector<std::string> resource_metadata_urls(const std::string& resource);
/// Where an issuer's metadata may be, in the order the MCP authorization
/// spec gives: RFC 8414 (path inserted), OpenID Connect Discovery (path
/// inserted, then appended).
std::vector<std::string> server_metadata_urls(const std::string& issuer);

/// RFC 9728 §2.
struct ResourceMetadata {
  std::string resource;
  std::vector<std::string> authorization_servers;
  std::vector<std::string> scopes_supported;
};
/// `body` as protected resource metadata; the error says what is wrong.
Result<ResourceMetadata> parse_resource_metadata(std::string_view body);

/// RFC 8414 §2 (the fields the gateway uses).
struct ServerMetadata {
  std::string issuer;
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string registration_endpoint;
  std::string revocation_endpoint;
  std::vector<std::string> code_challenge_methods;
  std::vector<std::string> token_endpoint_auth_methods;
  bool client_id_metadata_document_supported = false;
};
/// `body` as authorization server metadata of `issuer` (RFC 8414 §3.3: the
/// document must name that issuer); the error says what is wrong.
Result<ServerMetadata> parse_server_metadata(std::string_view body, std::string_view issuer);

/// A successful token response (RFC 6749 §5.1).
struct TokenResponse {
  std::string access_token;
  std::string refresh_token;  ///< "" when none was issued
  std::string scope;
  std::int64_t expires_in = 0;  ///< seconds; 0 = not said
};
/// `body` as a token response; an error when it is not one (never quoting a token).
Result<TokenResponse> parse_token_response(std::string_view body);
/// An error response (RFC 6749 §5.2): `error` and `error_description`.
struct ErrorResponse {
  std::string error;
  std::string description;
};
/// The error of `body`, when it is an OAuth error response.
std::optional<ErrorResponse> parse_error_response(std::string_view body);

/// Scopes as a `scope` parameter: space-separated.
std::string join_scopes(const std::vector<std::string>& scopes);
/// The gateway as a public client (PKCE, no secret): name, `redirect_url`,
/// the code and refresh grants (RFC 7591 §2), for dynamic registration and
/// the Client ID Metadata Document alike; compact JSON.
std::string public_client_metadata(const std::string& redirect_url, const std::string& client_id = {},
                                   const std::string& scope = {});

/// `bytes` cryptographically random bytes, base64url.
std::string random_token(std::size_t bytes);
/// A fresh PKCE code verifier: 32 random bytes, base64url (43 characters).
std::string pkce_verifier();
/// Its S256 code challenge.
std::string pkce_challenge(std::string_view verifier);

/// "scheme://host[:port]" of an absolute URL; "" when it is not one.
std::string origin_of(std::string_view url);
/// True when `url` is http:// to a host that is not loopback (nothing
/// secret is sent there, nothing trusted read from there).
bool clear_text_remote(std::string_view url);

}  // namespace mcpgw::oauth
