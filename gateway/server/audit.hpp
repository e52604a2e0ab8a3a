#pragma once
// The audit log (`audit:`): one JSON line per client tool call, chain hop,
// plugin upstream call, MRTR or saga round and refused request. Lines are
// formatted by the caller and written by a thread of the log's own through
// a bounded queue: a full queue drops the line (counted in
// mcpgw_audit_dropped_total), a call never waits for the disk.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "config/config.hpp"
#include "jsonrpc/json.hpp"
#include "server/metrics.hpp"
#include "upstream/origin.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::server {

/// What one audit line says. Empty strings and a negative `ms` are left out.
struct AuditRecord {
  /// call | chain_hop | plugin_call | mrtr_round | saga_round | refused
  std::string_view event;
  std::string principal, session, mode;
  std::string tool;           ///< the exposed tool the client called
  std::string server;         ///< the origin (server or plugin) of this call
  std::string upstream_tool;  ///< the tool's own name at that origin
  /// An OAuth upstream: the grant the call went with and as whom (the
  /// principal, or the gateway's client id); never a token.
  std::string upstream_grant, upstream_identity;
  const json::Value* arguments = nullptr;
  std::string_view outcome;   ///< ok | error | refused | cancelled | timeout
  double ms = -1;
  std::string chain_id;       ///< the chain (its first call's span) a hop belongs to
  int hop = 0;
  std::string trace_id;
  std::string reason;         ///< refusals: why; rounds: what the round did
  std::string policy;         ///< a call refused by a policy: the rule's name
  /// Secrets redaction masked or refused, as a JSON object of counts by
  /// detector ({"github_token":1}); never the secrets.
  std::string redactions;
};

class Audit {
 public:
  /// Lines the queue holds before it drops.
  static constexpr std::size_t kQueueLines = 8192;
  /// The writer writes up to this many lines at once, or what came within
  /// kBatchWait of the first one.
  static constexpr std::size_t kBatchLines = 256;
  static constexpr std::chrono::milliseconds kBatchWait{20};

  Audit(const config::Audit& cfg, Metrics& metrics);
  ~Audit();
  Audit(const Audit&) = delete;
  Audit& operator=(const Audit&) = delete;

  /// Applies `cfg` (reload): a new path is opened, no path closes the log.
  void configure(const config::Audit& cfg);
  /// The detectors every line is masked with before it is written (the
  /// status page's reasons too); null: none (redact: absent).
  void set_redaction(std::shared_ptr<const redact::Redactor> detectors);
  /// Reopens the file (SIGHUP, after logrotate moved it).
  void reopen();
  /// Whether lines are written (a path is set): callers skip building a
  /// record otherwise. Lock-free: asked on every call.
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  /// Queues one line; never blocks on I/O.
  void record(const AuditRecord& r);
  /// A request refused before it ran: counted in mcpgw_refused_total by
  /// `reason` (auth, rate_limited, tool_hidden, ...) and audited with
  /// outcome `refused`. `r.event` and `r.outcome` are set here.
  void refused(std::string_view reason, AuditRecord r);

  /// What the status page shows of a refusal or a failed call: the audit
  /// record without arguments (and records never hold tokens).
  struct Notable {
    double unix_ms = 0;
    std::string event, principal, mode, tool, server, upstream_tool, outcome, reason, trace_id;
    double ms = -1;
  };
  /// How many of them are kept (the newest).
  static constexpr std::size_t kNotableKept = 100;
  /// Whether a record with `outcome` is wanted: always for the audit log,
  /// and for the status page's recent failures when it is not `ok`.
  bool wants(std::string_view outcome) const { return enabled() || outcome != "ok"; }
  /// The last refusals and failed calls, oldest first, audit log or not.
  std::vector<Notable> recent() const;

  /// The line `r` becomes under `arguments` (exposed for tests and the
  /// benchmark); `now_ms` is the Unix time in ms.
  static std::string format(const AuditRecord& r, config::Audit::Arguments arguments, double now_ms);

 private:
  void run();
  void open_locked() REQUIRES(mu_);

  Metrics& metrics_;
  mutable util::Mutex mu_;
  std::condition_variable cv_;
  config::Audit cfg_ GUARDED_BY(mu_);
  std::shared_ptr<const redact::Redactor> redaction_ GUARDED_BY(mu_);
  std::atomic<bool> enabled_{false};  ///< atomic: read on every call without the lock
  std::deque<std::string> queue_ GUARDED_BY(mu_);
  bool reopen_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  /// Touched by the writer thread only, and with mu_ held: written outside
  /// it through a copy of the pointer.
  std::FILE* file_ GUARDED_BY(mu_) = nullptr;
  std::string open_path_ GUARDED_BY(mu_);  ///< what file_ is
  std::thread writer_;                     ///< set in the constructor, joined in the destructor
  mutable util::Mutex recent_mu_;
  std::deque<Notable> recent_ GUARDED_BY(recent_mu_);
};

/// "sha256:<hex>" of the canonical JSON of `v` (object keys sorted, no
/// whitespace), so equal arguments digest alike whatever their key order.
std::string canonical_digest(const json::Value& v);

}  // namespace mcpgw::server
