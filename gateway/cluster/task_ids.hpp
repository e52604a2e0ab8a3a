#pragma once
// Task ids the gateway hands its clients (docs/protocol.md, "Tasks"): the task itself,
// sealed (AES-256-GCM, cluster.secret) so that any replica holding the
// secret can tell whose task it is, where it runs and when it expires,
// without a lookup. The same task always gets the same id (a synthetic
// nonce), on every replica; a forged or altered id does not open.
//
// Format: "mt1" base64url(box); see util/aead.hpp.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/aead.hpp"

namespace mcpgw::cluster {

/// What a gateway task id names.
struct TaskRef {
  /// Upstream: an upstream server runs the task (pass-through); Gateway:
  /// the gateway runs the call itself (`tasks.gateway`).
  enum class Kind : std::uint8_t { Upstream = 1, Gateway = 2 } kind = Kind::Upstream;
  std::string principal;         ///< whose task; "" without auth
  std::string server;            ///< the upstream server (Upstream)
  std::string upstream_id;       ///< the upstream's task id; a gateway task's own key
  std::string upstream_session;  ///< the HTTP upstream session that created it, "" if none
  std::int64_t created_ms = 0;   ///< unix milliseconds
  std::int64_t expires_ms = 0;   ///< unix milliseconds; 0 = no expiry known
  bool operator==(const TaskRef&) const = default;
};

class TaskIds {
 public:
  /// `secrets` as cluster.secret; empty = a random key of this process, so
  /// its ids open here only.
  explicit TaskIds(const std::vector<std::string>& secrets);

  /// The id of `r`; the same `r` always gives the same id.
  Result<std::string> seal(const TaskRef& r) const;
  /// What `id` names, when the gateway made it.
  std::optional<TaskRef> open(std::string_view id) const;

 private:
  Aead aead_;
};

}  // namespace mcpgw::cluster
