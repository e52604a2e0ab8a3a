#pragma once
// Where the OAuth verifier gets its keys: a JWKS file read once (again on
// SIGHUP, which builds a new source), or a JWKS URL fetched on the I/O loop
// with the HTTP client, at start and again when a token names a key id the
// set lacks (at most once a minute). Requests find the keys cached, so
// checking a token does no I/O; one whose kid is unknown waits (without
// holding a thread) for the refetch.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/access.hpp"
#include "transport/io.hpp"
#include "util/result.hpp"
#include "util/task.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport {

class JwksSource : public std::enable_shared_from_this<JwksSource> {
 public:
  using Keys = std::shared_ptr<const auth::KeySet>;
  using Clock = std::chrono::steady_clock;
  /// Least time between two refetches for unknown key ids (the fetch at
  /// start is not one); after a failed fetch the next may start after
  /// kRetryAfterFailure.
  static constexpr std::chrono::seconds kRefetchInterval{60};
  static constexpr std::chrono::seconds kRetryAfterFailure{5};
  /// A JWKS larger than this is refused.
  static constexpr std::size_t kMaxBytes = 1 << 20;

  /// A source for `s`: reads jwks_file now (an error names the file and
  /// what is wrong), or checks jwks_url (https, or http to a loopback host).
  static Result<std::shared_ptr<JwksSource>> create(Io& io, const auth::OAuthSettings& s);

  /// The keys as last read; null before the first good fetch.
  Keys keys() const;
  /// Starts the first fetch of a URL source; nothing for a file.
  void start();
  /// For a token whose kid the keys lack: refetches them when allowed
  /// (joining a fetch under way) and returns the keys after it; the
  /// current keys at once when no fetch may start yet.
  Task<Keys> refresh();

 private:
  JwksSource(Io& io, std::string url) : io_(io), url_(std::move(url)) {}
  /// Queues `done` for the end of the fetch under way, starting one when
  /// allowed; calls it at once (with the current keys) otherwise.
  void when_fetched(std::function<void(Keys)> done) EXCLUDES(mu_);
  void begin_fetch() REQUIRES(mu_);
  Task<void> fetch();

  Io& io_;
  const std::string url_;  ///< empty for a file source
  mutable util::Mutex mu_;
  Keys keys_ GUARDED_BY(mu_);
  bool fetching_ GUARDED_BY(mu_) = false;
  bool last_failed_ GUARDED_BY(mu_) = false;
  Clock::time_point last_start_ GUARDED_BY(mu_){};
  bool ever_started_ GUARDED_BY(mu_) = false;
  std::optional<Clock::time_point> last_refetch_ GUARDED_BY(mu_);
  std::vector<std::function<void(Keys)>> waiters_ GUARDED_BY(mu_);
};

}  // namespace mcpgw::transport
