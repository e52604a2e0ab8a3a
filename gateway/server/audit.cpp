#include "server/audit.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "redact/json.hpp"
#include "util/hex.hpp"
#include "util/iso8601.hpp"

namespace mcpgw::server {
namespace {

void write_canonical(const json::Value& v, json::Writer& w) {
  if (v.IsObject()) {
    std::vector<const json::Value::Member*> members;
    for (const auto& m : v.GetObject()) members.push_back(&m);
    std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
      return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
             std::string_view(b->name.GetString(), b->name.GetStringLength());
    });
    w.StartObject();
    for (const auto* m : members) {
      w.Key(m->name.GetString(), m->name.GetStringLength());
      write_canonical(m->value, w);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (const auto& item : v.GetArray()) write_canonical(item, w);
    w.EndArray();
  } else {
    v.Accept(w);
  }
}

}  // namespace

std::string canonical_digest(const json::Value& v) {
  rapidjson::StringBuffer buf;
  json::Writer w(buf);
  write_canonical(v, w);
  return "sha256:" + sha256_hex(std::string_view(buf.GetString(), buf.GetSize()));
}

std::string Audit::format(const AuditRecord& r, config::Audit::Arguments arguments, double now_ms) {
  rapidjson::StringBuffer buf;
  json::Writer w(buf);
  auto field = [&](const char* key, std::string_view value) {
    if (value.empty()) return;
    w.Key(key);
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  };
  w.StartObject();
  field("time", iso8601(static_cast<std::int64_t>(now_ms)));
  field("event", r.event);
  field("principal", r.principal);
  field("session", r.session);
  field("mode", r.mode);
  field("tool", r.tool);
  field("server", r.server);
  field("upstream_tool", r.upstream_tool);
  field("upstream_grant", r.upstream_grant);
  field("upstream_identity", r.upstream_identity);
  if (r.arguments && arguments != config::Audit::Arguments::None) {
    if (arguments == config::Audit::Arguments::Full) {
      w.Key("arguments");
      r.arguments->Accept(w);
    } else {
      field("arguments_digest", canonical_digest(*r.arguments));
    }
  }
  field("outcome", r.outcome);
  if (r.ms >= 0) {
    w.Key("ms");
    // Tenths of a millisecond are plenty, and keep the lines short.
    w.Double(static_cast<double>(static_cast<long long>(r.ms * 10 + 0.5)) / 10);
  }
  field("chain_id", r.chain_id);
  if (r.hop > 0) {
    w.Key("hop");
    w.Int(r.hop);
  }
  field("trace_id", r.trace_id);
  field("reason", r.reason);
  field("policy", r.policy);
  if (!r.redactions.empty()) {
    w.Key("redactions");
    w.RawValue(r.redactions.data(), r.redactions.size(), rapidjson::kObjectType);
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

Audit::Audit(const config::Audit& cfg, Metrics& metrics) : metrics_(metrics), cfg_(cfg), enabled_(!cfg.path.empty()) {
  writer_ = std::thread([this] { run(); });
}

Audit::~Audit() {
  {
    util::MutexLock lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  writer_.join();
}

void Audit::configure(const config::Audit& cfg) {
  {
    util::MutexLock lk(mu_);
    if (cfg == cfg_) return;
    cfg_ = cfg;
    enabled_ = !cfg.path.empty();
    reopen_ = true;
  }
  cv_.notify_all();
}

void Audit::set_redaction(std::shared_ptr<const redact::Redactor> detectors) {
  util::MutexLock lk(mu_);
  redaction_ = std::move(detectors);
}

void Audit::reopen() {
  {
    util::MutexLock lk(mu_);
    if (cfg_.path.empty()) return;
    reopen_ = true;
  }
  cv_.notify_all();
}

std::vector<Audit::Notable> Audit::recent() const {
  util::MutexLock lk(recent_mu_);
  return {recent_.begin(), recent_.end()};
}

void Audit::record(const AuditRecord& r) {
  double now_ms =
      std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
  config::Audit::Arguments arguments;
  std::shared_ptr<const redact::Redactor> redaction;
  {
    util::MutexLock lk(mu_);
    arguments = cfg_.arguments;
    redaction = redaction_;
  }
  std::string masked;
  if (r.outcome != "ok") {
    // A reason may quote what a client or upstream sent.
    redact::Tally tally;
    bool hid = redaction && redaction->mask(r.reason, masked, tally);
    Notable n{now_ms,     std::string(r.event),   r.principal,        r.mode,   r.tool,
              r.server,   r.upstream_tool,        std::string(r.outcome), hid ? masked : r.reason, r.trace_id, r.ms};
    util::MutexLock lk(recent_mu_);
    recent_.push_back(std::move(n));
    if (recent_.size() > kNotableKept) recent_.pop_front();
  }
  if (!enabled()) return;
  // Formatted here, on the caller's thread: the digest is the only real
  // work, and the writer then only copies bytes.
  std::string line = format(r, arguments, now_ms);
  // What the line quotes (arguments, reasons, names) is masked as JSON:
  // a secret never reaches the file, whatever redact.in says.
  redact::Tally tally;
  if (redaction && redact::mask_json_text(*redaction, line, masked, tally)) line.swap(masked);
  line.push_back('\n');
  bool wake = false;
  {
    util::MutexLock lk(mu_);
    if (queue_.size() >= kQueueLines) {
      metrics_.audit_dropped();
      return;
    }
    // The writer is woken for the first line of a batch and when a batch is
    // full, not for every line: a wake-up per call costs more than the line.
    wake = queue_.empty() || queue_.size() + 1 == kBatchLines;
    queue_.push_back(std::move(line));
  }
  if (wake) cv_.notify_one();
}

void Audit::refused(std::string_view reason, AuditRecord r) {
  metrics_.refused(reason);
  r.event = "refused";
  r.outcome = "refused";
  record(r);
}

void Audit::open_locked() {
  if (file_ && file_ != stderr) std::fclose(file_);
  file_ = nullptr;
  open_path_ = cfg_.path;
  if (open_path_.empty()) return;
  if (open_path_ == "-") {
    file_ = stderr;
    return;
  }
  file_ = std::fopen(open_path_.c_str(), "a");
  if (!file_)
    spdlog::error("audit: cannot open {}: {}; audit lines are dropped (counted) until a SIGHUP reopens it", open_path_, std::strerror(errno));
}

void Audit::run() {
  util::UniqueLock lk(mu_);
  open_locked();
  for (;;) {
    cv_.wait(lk.native(), [&]() REQUIRES(mu_) { return stopping_ || reopen_ || !queue_.empty(); });
    // Lines of the next few milliseconds go out in the same write.
    cv_.wait_for(lk.native(), kBatchWait,
                 [&]() REQUIRES(mu_) { return stopping_ || reopen_ || queue_.size() >= kBatchLines; });
    if (reopen_) {
      reopen_ = false;
      open_locked();
    }
    std::deque<std::string> batch;
    batch.swap(queue_);
    bool stop = stopping_;
    std::FILE* f = file_;
    lk.unlock();
    std::size_t lost = 0;
    for (const auto& line : batch)
      if (!f || std::fwrite(line.data(), 1, line.size(), f) != line.size()) ++lost;
    // A failed flush lost what it held: the batch, as far as we can tell.
    if (f && std::fflush(f) != 0) lost = batch.size();
    for (std::size_t i = 0; i < lost; ++i) metrics_.audit_dropped();
    lk.lock();
    if (stop && queue_.empty()) break;
  }
  if (file_ && file_ != stderr) std::fclose(file_);
  file_ = nullptr;
}

}  // namespace mcpgw::server
