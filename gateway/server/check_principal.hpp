#pragma once
// `mcpgw check --principal NAME`: the catalog as one principal sees it
// under the policies.
#include <string>
#include <vector>

#include "catalog/policy.hpp"
#include "util/result.hpp"

namespace mcpgw::server {

/// Who `check --principal` shows the catalog to.
struct CheckPrincipal {
  std::string name;
  /// `--claims`: the claims of an OAuth principal's token, a JSON object
  /// ("" none); its `scope` (or `scp`) are the scopes.
  std::string claims;
};

/// That principal as the policies see it, and the modes it may use.
struct PrincipalView {
  catalog::Subject subject;
  std::vector<std::string> modes;  ///< empty: any
};

/// The principal `p` names in `cfg`: a static bearer token's name (no
/// claims, the token's modes), or, with auth.oauth, any other name as an
/// OAuth principal with the claims given. An error names the principals
/// there are.
Result<PrincipalView> principal_view(const config::Config& cfg, const CheckPrincipal& p);

/// For each tool of `snap`, the modes (by name, "all" first) in which the
/// principal sees it: visible there, a mode it may use, and a tool some
/// arguments let through the policies; empty: hidden from it.
std::vector<std::vector<std::string>> modes_seen(const catalog::Snapshot& snap, const PrincipalView& who,
                                                 std::span<const config::Policy> policies);

}  // namespace mcpgw::server
