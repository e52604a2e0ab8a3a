#pragma once
// Consent flows (grant authorization_code) travel sealed: in the link the
// client is given (`/oauth/authorize?flow=`) and, bound to the browser that
// opened it, as the OAuth `state` the provider hands back to the callback.
// Any replica with the key opens them; nothing is kept while the user
// decides. A flow lives kFlowTtl and completes once (TokenStore::use_once).
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "oauth/client.hpp"

namespace mcpgw::oauth {

/// How long a consent link (and its state) stays good.
inline constexpr std::chrono::seconds kFlowTtl{600};

/// `f` sealed under `aead`, base64url.
Result<std::string> seal_flow(const Aead& aead, const Flow& f);
/// The flow sealed in `text`, when it opens, is well formed and was
/// created at most kFlowTtl before `now` (unix seconds).
std::optional<Flow> open_flow(const Aead& aead, std::string_view text, std::int64_t now);
/// Unix seconds now.
std::int64_t unix_now();

}  // namespace mcpgw::oauth
