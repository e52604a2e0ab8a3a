#pragma once
// HTTP requests to authorization servers (and to an upstream's metadata)
// on the I/O loop, through the gateway's HttpClient: one keep-alive pool
// per origin, answers bounded in size, every request bounded by a deadline
// and by the call's cancellation. Nothing blocks a thread.
#include <chrono>
#include <map>
#include <memory>
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

class Fetcher {
 public:
  /// Largest answer read; a larger one is an error.
  static constexpr std::size_t kMaxBody = 1 << 20;

  /// https origins are checked with `tls` (a server's tls settings).
  Fetcher(transport::Io& io, transport::TlsOptions tls);

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
  util::Mutex mu_;
  std::map<std::string, std::shared_ptr<transport::HttpClient>> clients_ GUARDED_BY(mu_);  ///< by origin
};

}  // namespace mcpgw::oauth
