#include "auth/token_cache.hpp"

#include <openssl/evp.h>

namespace mcpgw::auth {
namespace {

/// The cache's key: a digest, so the map holds 32 bytes per token
/// whatever its length.
std::string digest(std::string_view token) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(token.data(), token.size(), md, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(md), len);
}

}  // namespace

std::optional<Verdict> TokenCache::find(std::string_view token, const std::shared_ptr<const KeySet>& keys,
                                        std::int64_t now_s) {
  if (!keys) return std::nullopt;
  std::string key = digest(token);
  util::MutexLock lk(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  // A weak pointer: a key set freed and another allocated at its address
  // is not mistaken for it.
  if (now_s > it->second.verdict.valid_until || it->second.keys.lock() != keys) {
    entries_.erase(it);
    return std::nullopt;
  }
  return it->second.verdict;
}

void TokenCache::put(std::string_view token, const std::shared_ptr<const KeySet>& keys, const Verdict& v,
                     std::int64_t now_s) {
  if (!keys || v.outcome != Verdict::Outcome::Admitted || !v.oauth) return;
  std::string key = digest(token);
  util::MutexLock lk(mu_);
  if (entries_.size() >= capacity_) {
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (now_s > it->second.verdict.valid_until || it->second.keys.expired()) it = entries_.erase(it);
      else ++it;
    }
    if (entries_.size() >= capacity_) entries_.clear();
  }
  entries_.insert_or_assign(std::move(key), Entry{v, keys});
}

}  // namespace mcpgw::auth
