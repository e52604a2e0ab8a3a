#include "telemetry/exporter.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "transport/http_client.hpp"

namespace mcpgw::telemetry {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

/// Tries of one batch while the collector fails (1, 2, 4, 8, 16 s apart
/// and more): about a minute, then the batch is dropped and counted.
constexpr int kMaxAttempts = 7;
/// Room for one encoded span up front (the usual ones take 250 to 400
/// bytes), so that encoding it allocates once.
constexpr std::size_t kTypicalSpanBytes = 512;
/// The collector's answer is read only this far (it is a short protobuf).
constexpr std::size_t kMaxAnswer = 64 * 1024;

struct Attempt {
  bool ok = false;
  bool retryable = false;
  std::chrono::milliseconds retry_after{0};  ///< the collector's Retry-After; 0 = none
  std::string why;
};

}  // namespace

struct Exporter::Loop {
  explicit Loop(transport::Io& io)
      : strand(asio::make_strand(io.executor())), timer(strand), backoff(strand) {}
  asio::any_io_executor strand;
  asio::steady_timer timer;    ///< the flush interval; wake() cuts it short
  asio::steady_timer backoff;  ///< between tries of a batch; only shutdown cuts it short
  std::shared_ptr<transport::HttpClient> client;
  std::string url_text;
  // While the collector fails: the next backoff and what was lost meanwhile.
  bool failing = false;
  std::size_t lost_while_failing = 0;
  std::chrono::milliseconds delay{0};

  /// Sends one batch of `count` spans (`body`), trying again with backoff
  /// while the collector is down or overloaded, and tells `e` the outcome.
  Task<void> deliver(Exporter& e, std::size_t count, std::string& body) {
    const ExporterSettings& s = e.settings_;
    for (int attempt = 1;; ++attempt) {
      Attempt a = co_await post(s, body);
      if (a.ok) {
        e.report(s.on_exported, count);
        if (failing)
          spdlog::info("otlp: exporting to {} again ({} spans dropped meanwhile)", url_text, lost_while_failing);
        failing = false;
        lost_while_failing = 0;
        delay = std::chrono::milliseconds{0};
        co_return;
      }
      bool stopping;
      {
        util::MutexLock lk(e.mu_);
        stopping = e.stopping_;
      }
      if (!a.retryable || stopping || attempt >= kMaxAttempts) {
        e.report(s.on_dropped, count);
        lost_while_failing += count;
        spdlog::warn("otlp: dropped {} spans: export to {} failed: {}{}", count, url_text, a.why,
                     a.retryable ? " (gave up after " + std::to_string(attempt) + " tries)" : "");
        co_return;
      }
      if (!failing)
        spdlog::warn("otlp: export to {} failed: {}; retrying with backoff (calls are not affected)", url_text,
                     a.why);
      failing = true;
      delay = std::min(s.max_backoff, delay.count() ? delay * 2 : std::chrono::milliseconds{1000});
      boost::system::error_code ec;
      backoff.expires_after(a.retry_after.count() ? std::min(a.retry_after, s.max_backoff) : delay);
      co_await backoff.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
  }

  /// Sends `body`, which is lent to the request and given back (its
  /// buffer serves every batch).
  Task<Attempt> post(const ExporterSettings& s, std::string& body) {
    auto abort = transport::Abort::start(strand, Clock::now() + s.request_timeout, nullptr);
    transport::HttpRequest req{"POST", {{"Content-Type", "application/x-protobuf"}}, std::move(body), ""};
    for (const auto& h : s.headers) req.headers.push_back(h);
    std::size_t answered = 0;
    transport::HttpResult res = co_await client->exchange(
        req, *abort, [](const transport::HttpHead&) { return true; },
        [&](std::string_view data) { return (answered += data.size()) <= kMaxAnswer; });
    abort->disarm();
    body = std::move(req.body);
    Attempt a;
    if (!res.error.empty()) {
      a.retryable = true;  // not reached, or no answer: the collector may be restarting
      a.why = res.error;
      co_return a;
    }
    int status = res.head.status;
    a.ok = status >= 200 && status < 300;
    // The OTLP/HTTP rule: only these mean "try again later".
    a.retryable = status == 429 || status == 502 || status == 503 || status == 504;
    if (auto after = res.head.get("Retry-After"); !after.empty() && std::all_of(after.begin(), after.end(), ::isdigit))
      a.retry_after = std::chrono::seconds(std::min(std::stoll(after), 3600LL));
    if (!a.ok) a.why = "HTTP " + std::to_string(status);
    co_return a;
  }
};

Result<std::shared_ptr<Exporter>> Exporter::create(transport::Io& io, ExporterSettings settings) {
  std::string base = settings.endpoint;
  while (!base.empty() && base.back() == '/') base.pop_back();
  auto url = transport::Url::parse(base + "/v1/traces");
  if (!url) return Error{"telemetry.otlp.endpoint: " + url.error()};
  auto client = transport::HttpClient::create(io, *url, transport::TlsOptions{});
  if (!client) return Error{"telemetry.otlp.endpoint: " + client.error()};
  std::shared_ptr<Exporter> e(new Exporter(io, std::move(settings)));
  e->loop_->client = std::move(*client);
  e->loop_->url_text = url->text();
  return e;
}

Exporter::Exporter(transport::Io& io, ExporterSettings settings)
    : io_(io), settings_(std::move(settings)), loop_(std::make_shared<Loop>(io)) {}

Exporter::~Exporter() = default;

bool Exporter::sampled(const mcp::TraceContext& trace) const {
  // The decision travels in the trace flags: a trace the gateway started
  // carries its own, a client's trace the client's.
  return sampled_flag(trace.flags);
}

bool Exporter::sample_new(std::string_view trace_id) const { return sampled_by_ratio(trace_id, settings_.sample_ratio); }

void Exporter::record(const mcp::Span& span) {
  // Encoded before the lock: the lock only covers a copy of its bytes. Into
  // a buffer each thread keeps, so that a span costs no allocation of its own.
  thread_local std::string entry;
  entry.clear();
  if (entry.capacity() < kTypicalSpanBytes) entry.reserve(kTypicalSpanBytes);
  append_span(entry, span);
  bool dropped = false, full_batch = false;
  {
    util::MutexLock lk(mu_);
    if ((stopping_ && finished_) || queued_ >= settings_.queue_limit) {
      dropped = true;
    } else {
      if (filling_.count == 0 && !spare_.empty()) {
        filling_.spans = std::move(spare_.back());
        spare_.pop_back();
      }
      filling_.spans.append(entry);
      ++queued_;
      if (++filling_.count >= settings_.batch_size) {
        full_.push_back(std::move(filling_));
        filling_ = Batch{};
        full_batch = true;
      }
    }
  }
  if (dropped) report(settings_.on_dropped, 1);
  if (full_batch) wake();
}

void Exporter::report(const std::function<void(std::size_t)>& to, std::size_t n) {
  // Shared so that shutdown() can wait for a report under way.
  util::ReaderLock lk(report_mu_);
  if (!detached_ && to) to(n);
}

void Exporter::wake() {
  if (wake_pending_.exchange(true)) return;
  asio::post(loop_->strand, [loop = loop_] { loop->timer.cancel(); });
}

Exporter::Batch Exporter::take_batch() {
  util::MutexLock lk(mu_);
  Batch b;
  if (!full_.empty()) {
    b = std::move(full_.front());
    full_.pop_front();
  } else {
    std::swap(b, filling_);
  }
  queued_ -= b.count;
  return b;
}

void Exporter::recycle(std::string spans) {
  spans.clear();
  util::MutexLock lk(mu_);
  // Two cover the batch being filled while one is sent.
  if (spare_.size() < 2) spare_.push_back(std::move(spans));
}

void Exporter::start() {
  {
    util::MutexLock lk(mu_);
    if (started_ || stopping_) return;
    started_ = true;
  }
  auto self = shared_from_this();
  asio::co_spawn(
      loop_->strand,
      [self]() -> Task<void> {
        Loop& loop = *self->loop_;
        const ExporterSettings& s = self->settings_;
        std::string body;  // kept between batches: no large allocation per batch
        for (;;) {
          bool stopping, full;
          {
            util::MutexLock lk(self->mu_);
            stopping = self->stopping_;
            full = !self->full_.empty();
          }
          // A full batch waiting goes at once (a wake-up that came while the
          // last one was being sent found no wait to cut short).
          if (!stopping && !full) {
            boost::system::error_code ec;
            loop.timer.expires_after(s.flush_interval);
            co_await loop.timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
          }
          self->wake_pending_ = false;
          auto batch = self->take_batch();
          if (batch.count == 0) {
            util::MutexLock lk(self->mu_);
            if (self->stopping_) break;
            continue;
          }
          encode_export_request(batch.spans, s.resource, "mcpgw", MCPGW_VERSION, body);
          self->recycle(std::move(batch.spans));
          co_await loop.deliver(*self, batch.count, body);
        }
        loop.client->clear();
        {
          util::MutexLock lk(self->mu_);
          self->finished_ = true;
        }
        self->finished_cv_.notify_all();
      },
      asio::detached);
}

void Exporter::shutdown(std::chrono::milliseconds grace) {
  {
    util::MutexLock lk(mu_);
    if (stopping_) return;
    stopping_ = true;
    if (!started_) finished_ = true;
  }
  asio::post(loop_->strand, [loop = loop_] {
    loop->timer.cancel();
    loop->backoff.cancel();
  });
  {
    util::UniqueLock lk(mu_);
    if (!finished_cv_.wait_for(lk.native(), grace, [&]() REQUIRES(mu_) { return finished_; }))
      spdlog::warn("otlp: {} spans not exported at shutdown", queued_);
  }
  // A loop still sending (a collector that does not answer) may outlive
  // the owner of the callbacks: it reports nothing from now on.
  util::WriterLock lk(report_mu_);
  detached_ = true;
}

}  // namespace mcpgw::telemetry
