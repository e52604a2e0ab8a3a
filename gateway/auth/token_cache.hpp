#pragma once
// Verdicts of JWTs already checked, so a client that sends the same token
// on every request pays for its signature once: a hit costs a SHA-256 of
// the token and a map lookup. An entry holds until the token expires and
// only for the key set it was checked under (a reloaded or refetched JWKS
// starts afresh); the policy that made it lives in the same AccessState,
// so a reload drops the whole cache.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "auth/access.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::auth {

class TokenCache {
 public:
  /// At most `capacity` entries; when full, expired ones are dropped, and
  /// if none is, the whole cache.
  explicit TokenCache(std::size_t capacity = 4096) : capacity_(capacity) {}
  /// The admitted verdict of `token` checked under `keys`, while it holds at `now_s`.
  std::optional<Verdict> find(std::string_view token, const std::shared_ptr<const KeySet>& keys, std::int64_t now_s);
  /// Remembers an admitted JWT verdict (`v.valid_until` set).
  void put(std::string_view token, const std::shared_ptr<const KeySet>& keys, const Verdict& v, std::int64_t now_s);

 private:
  struct Entry {
    Verdict verdict;
    std::weak_ptr<const KeySet> keys;
  };
  const std::size_t capacity_;
  util::Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mu_);  // by SHA-256 of the token
};

}  // namespace mcpgw::auth
