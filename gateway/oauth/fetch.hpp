#pragma once
// HTTP requests to authorization servers (and to an upstream's metadata)
// on the I/O loop, through the gateway's HttpClient: one keep-alive pool
// per origin, answers bounded in size, every request bounded by a deadline
// and by the call's cancellation. Nothing blocks a thread. Redirects are
// not followed: a 30x is an answer like any other, which the callers refuse.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "transport/http_client.hpp"
#include "util/event.hpp"
#include "util/result.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::oauth {

using Clock = std::chrono::steady_clock;

/// An answer: any status (the caller decides what it means).
struct HttpAnswer {
  int status = 0;
  transport::HttpHead head;
  std::string body;
};

/// What a Fetcher may reach when the URLs come from someone else (an
/// upstream's discovery): the origins the operator configured, unchecked,
/// and elsewhere only what `guard` allows.
struct Reach {
  transport::AddressPolicy guard;
  std::set<std::string> trusted;  ///< origin_key()s
};

/// "http(s)://host:port" of `url`, its host in lower case; "" when it is no http(s) URL.
std::string origin_key(const std::string& url);

/// "HTTP <status>", saying of a redirect that it was not followed (and where to).
std::string status_text(const HttpAnswer& answer);

class Fetcher {
 public:
  /// Largest answer read; a larger one is an error.
  static constexpr std::size_t kMaxBody = 1 << 20;

  /// https origins are checked with `tls` (a server's tls settings).
  /// Without `reach`, every address may be reached (URLs the operator gave).
  Fetcher(transport::Io& io, transport::TlsOptions tls, std::optional<Reach> reach = std::nullopt);

  /// Whether `url`'s host may be looked up and reached (the addresses it
  /// resolves to are checked again when connecting); the error names the
  /// host and the rule.
  Result<void> permits(const std::string& url) const;

  /// Sends `method` to `url` and reads the answer. Must be co_awaited on a
  /// strand. The error says why there is no answer ("cannot connect",
  /// "no answer in time", ...), never a header or body sent, and not the
  /// URL, which the caller names where it tells of the failure.
  Task<Result<HttpAnswer>> send(std::string method, const std::string& url, transport::Headers headers,
                                std::string body, Clock::time_point deadline, CancelSignal* cancel = nullptr);

 private:
  Result<std::shared_ptr<transport::HttpClient>> client_for(const std::string& url);

  transport::Io& io_;
  transport::TlsOptions tls_;
  std::optional<Reach> reach_;
  util::Mutex mu_;
  std::map<std::string, std::shared_ptr<transport::HttpClient>> clients_ GUARDED_BY(mu_);  ///< by origin
};

}  // namespace mcpgw::oauth
