#pragma once
// Tokens at rest. The gateway keeps each principal's tokens for each
// upstream (grant authorization_code) sealed with AES-256-GCM under the
// configured key, bound to their (server, principal); where the sealed
// records rest is a TokenStore: process memory, a file, or Redis (the
// cluster module's, shared by every replica).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "util/aead.hpp"
#include "util/event.hpp"
#include "util/result.hpp"
#include "util/thread_annotations.hpp"
#include "util/worker_pool.hpp"

namespace mcpgw::oauth {

/// What the gateway holds of one grant. Never logged, never in a message.
struct Tokens {
  std::string access_token;
  std::string refresh_token;  ///< "" when the provider issued none
  std::string scope;
  std::int64_t obtained_at = 0;  ///< unix seconds
  std::int64_t expires_at = 0;   ///< unix seconds; 0 = the provider did not say
  /// The client they were issued to (a dynamically registered one differs
  /// per process): a refresh must come from the same client.
  std::string client_id;
  bool operator==(const Tokens&) const = default;
};

/// The store's key of `principal`'s tokens at `server`: a digest, so that
/// neither name is written where the tokens rest.
std::string token_key(std::string_view server, std::string_view principal);

/// Seals Tokens for their (server, principal) and opens them again.
class Vault {
 public:
  explicit Vault(const std::vector<std::string>& secrets);
  Result<std::string> seal(std::string_view server, std::string_view principal, const Tokens& t) const;
  /// nullopt when the blob was not sealed for this (server, principal)
  /// under one of the keys.
  std::optional<Tokens> open(std::string_view server, std::string_view principal, std::string_view blob) const;

 private:
  Aead aead_;
};

/// Where sealed records rest, by key. Every operation completes on the
/// caller's executor; none blocks a thread.
class TokenStore {
 public:
  virtual ~TokenStore() = default;
  /// The record under `key`; nullopt when there is none.
  virtual Task<Result<std::optional<std::string>>> load(const std::string& key) = 0;
  virtual Task<Result<void>> save(const std::string& key, const std::string& blob) = 0;
  virtual Task<Result<void>> erase(const std::string& key) = 0;
  /// Records the first use of `id` (a consent flow), remembered until unix
  /// second `expires`: true the first time, wherever the store is shared.
  virtual Task<Result<bool>> use_once(const std::string& id, std::int64_t expires) = 0;
  /// How messages name it ("memory", "file /var/lib/mcpgw/tokens", ...).
  virtual std::string describe() const = 0;
  /// `fn` is told of every key another process sharing the store changed
  /// (from an I/O thread), so cached copies can go.
  virtual void on_changed(std::function<void(const std::string& key)> fn) { (void)fn; }
};

/// The records in this process only (lost on exit).
class MemoryStore : public TokenStore {
 public:
  Task<Result<std::optional<std::string>>> load(const std::string& key) override;
  Task<Result<void>> save(const std::string& key, const std::string& blob) override;
  Task<Result<void>> erase(const std::string& key) override;
  Task<Result<bool>> use_once(const std::string& id, std::int64_t expires) override;
  std::string describe() const override { return "memory"; }

 protected:
  mutable util::Mutex mu_;
  /// The records now (for a subclass to persist).
  std::map<std::string, std::string> records_ GUARDED_BY(mu_);

 private:
  std::map<std::string, std::int64_t> used_ GUARDED_BY(mu_);  ///< flow id -> expiry
};

/// The records in a file (mode 0600), rewritten whole on each change by a
/// thread of its own, replaced atomically (rename): a crash leaves the old
/// file or the new one.
class FileStore final : public MemoryStore {
 public:
  /// Reads `path` (absent = empty); the error names the file and the problem.
  static Result<std::shared_ptr<FileStore>> open(const std::string& path);
  Task<Result<void>> save(const std::string& key, const std::string& blob) override;
  Task<Result<void>> erase(const std::string& key) override;
  std::string describe() const override { return "file " + path_; }

  explicit FileStore(std::string path) : path_(std::move(path)) {}

 private:
  /// Writes the records as they are when its turn comes (one writer
  /// thread: the last write has the latest state).
  Task<Result<void>> persist();
  std::string path_;
  WorkerPool writer_{0, 1};
};

}  // namespace mcpgw::oauth
