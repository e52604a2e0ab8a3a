#pragma once
// The OTLP/HTTP trace exporter: spans are queued by record() on the call
// path (a bounded queue: a full one drops the span and counts it, never
// waits) and sent in batches by one coroutine on the I/O loop, which
// retries with backoff while the collector is down or overloaded.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mcp/span.hpp"
#include "telemetry/otlp.hpp"
#include "transport/io.hpp"
#include "util/result.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::telemetry {

/// What the exporter needs to know.
struct ExporterSettings {
  std::string endpoint;  ///< OTLP/HTTP base URL; spans go to <endpoint>/v1/traces
  std::vector<std::pair<std::string, std::string>> headers;
  double sample_ratio = 1.0;
  Resource resource;
  std::size_t queue_limit = 8192;  ///< spans waiting at most; more are dropped
  std::size_t batch_size = 1024;   ///< spans per export request at most
  std::chrono::milliseconds flush_interval{1000};
  std::chrono::milliseconds request_timeout{10000};
  std::chrono::milliseconds max_backoff{30000};
  /// Told of spans dropped (queue full, batch refused or given up) and
  /// spans exported, as counts; called from any thread, must not block.
  std::function<void(std::size_t)> on_dropped, on_exported;
};

/// Sends spans to an OTLP/HTTP collector.
class Exporter final : public mcp::SpanSink, public std::enable_shared_from_this<Exporter> {
 public:
  /// Checks the endpoint; starts nothing.
  static Result<std::shared_ptr<Exporter>> create(transport::Io& io, ExporterSettings settings);
  ~Exporter() override;

  /// Starts the export loop on `io`.
  void start();
  /// Sends what is queued (for at most `grace`) and ends the loop; after it
  /// returns the callbacks of the settings are not called any more. Call
  /// from a thread that is not the loop's.
  void shutdown(std::chrono::milliseconds grace);

  bool sampled(const mcp::TraceContext& trace) const override;
  bool sample_new(std::string_view trace_id) const override;
  void record(const mcp::Span& span) override;

 private:
  struct Loop;
  /// Spans encoded as they finished (otlp's append_span entries): what the
  /// queue holds, so a span is freed where it was made and a batch is one
  /// buffer.
  struct Batch {
    std::string spans;
    std::size_t count = 0;
  };
  Exporter(transport::Io& io, ExporterSettings settings);
  /// The oldest full batch, else what has gathered since the last one.
  Batch take_batch();
  /// Keeps a sent batch's buffer for the next one: a batch's size is past
  /// malloc's large-block threshold, whose every free costs a heap sweep.
  void recycle(std::string spans);
  void wake();
  /// Tells `to` (on_dropped or on_exported) of `n` spans, unless shutdown() has returned.
  void report(const std::function<void(std::size_t)>& to, std::size_t n);

  transport::Io& io_;
  ExporterSettings settings_;
  std::shared_ptr<Loop> loop_;
  util::Mutex mu_;
  Batch filling_ GUARDED_BY(mu_);
  std::deque<Batch> full_ GUARDED_BY(mu_);   ///< batch_size spans each
  std::size_t queued_ GUARDED_BY(mu_) = 0;   ///< spans in filling_ and full_
  std::vector<std::string> spare_ GUARDED_BY(mu_);  ///< emptied batch buffers
  bool started_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool finished_ GUARDED_BY(mu_) = false;
  std::condition_variable finished_cv_;
  std::atomic<bool> wake_pending_{false};
  util::SharedMutex report_mu_;
  bool detached_ GUARDED_BY(report_mu_) = false;
};

}  // namespace mcpgw::telemetry
