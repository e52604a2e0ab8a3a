#pragma once
// How a plugin's handlers run: inside the gateway (InProcess) or in a host
// process of its own (Isolated). Plugin (plugin.hpp) holds one and does
// what both share: the tool list, the rounds of client input, the checks
// of what a handler returns, max_concurrency.
#include <chrono>
#include <string>

#include "upstream/origin.hpp"
#include "util/task.hpp"

namespace mcpgw::plugin {

/// What one run of a handler produced.
struct Outcome {
  enum class Kind {
    Result,    ///< `text` is what the handler returned (to be checked)
    NoResult,  ///< the handler returned NULL
    Threw,     ///< an exception crossed the C ABI
    Failed,    ///< the run failed around the handler: `text` is the whole message for the client
  };
  Kind kind = Kind::Failed;
  std::string text;
};

/// One run of a handler: tool, arguments, the answers and state of earlier
/// rounds (all JSON text).
struct Run {
  std::string tool, arguments, answers, state;
};

/// Runs a loaded plugin's handlers.
class Engine {
 public:
  virtual ~Engine() = default;
  /// Runs `run` for the client call of `opts`; `deadline` is timeout_ms's.
  virtual Task<Outcome> call(const Run& run, const upstream::CallOptions& opts,
                             std::chrono::steady_clock::time_point deadline) = 0;
  /// "" while it serves; else why its calls fail (status page, /readyz).
  virtual std::string down() const { return ""; }
  /// Host process id, 0 for none (in process, or between hosts).
  virtual int pid() const { return 0; }
  /// How memory_mb is enforced ("" in process, where it is not).
  virtual std::string memory_limit() const { return ""; }
};

}  // namespace mcpgw::plugin
