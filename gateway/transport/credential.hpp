#pragma once
// The Authorization header an upstream connection sends (the upstream's
// OAuth token, gateway/oauth): asked for before each request, and once
// more, renewed, when the server refuses one with HTTP 401. The transport
// knows nothing of how it is obtained.
#include <chrono>
#include <string>

#include "util/cancel.hpp"
#include "util/event.hpp"
#include "util/result.hpp"

namespace mcpgw::transport {

class Credential {
 public:
  virtual ~Credential() = default;
  /// The header value ("Bearer ..."), or why there is none (naming the
  /// provider and the step). `rejected`: the value the server just
  /// refused, which is renewed. Resumes on the caller's strand.
  virtual Task<Result<std::string>> authorization(std::chrono::steady_clock::time_point deadline, CancelSignal* cancel,
                                                  const std::string& rejected) = 0;
};

}  // namespace mcpgw::transport
