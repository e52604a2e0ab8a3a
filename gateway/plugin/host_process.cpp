#include "plugin/host_process.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstring>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "mcp/protocol.hpp"
#include "plugin/upstream_call.hpp"
#include "transport/line_buffer.hpp"

namespace mcpgw::plugin {

namespace ph = plugin_host;
using namespace std::chrono_literals;

namespace {
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
/// A stopped host gets this long to let its calls end and run shutdown.
constexpr auto kStopGrace = 5000ms;
/// Longest line of a plugin's output logged whole.
constexpr std::size_t kMaxOutputLine = 16 * 1024;

}  // namespace

/// One call running in the host.
struct HostProcess::Pending {
  std::string tool;
  const upstream::CallOptions* opts = nullptr;
  std::optional<Outcome> outcome;    ///< under the host's mu_
  std::vector<std::string> called;   ///< servers it called; under mu_
  int upstream_running = 0;          ///< its upstream calls not yet answered; under mu_
  Event changed;
};

HostProcess::HostProcess(std::shared_ptr<Host> host, HostSpec spec, asio::strand<asio::any_io_executor> strand,
                         std::shared_ptr<transport::ChildProcess> child)
    : host_(std::move(host)),
      spec_(std::move(spec)),
      strand_(std::move(strand)),
      child_(std::move(child)),
      started_(std::chrono::steady_clock::now()) {}

HostProcess::~HostProcess() = default;

Task<Result<std::pair<std::shared_ptr<HostProcess>, Hello>>> HostProcess::start(
    std::shared_ptr<Host> host, HostSpec spec, std::chrono::steady_clock::time_point deadline) {
  const std::string where = "plugin " + spec.cfg.path;
  transport::ChildSpec cs;
  cs.command = spec.program;
  cs.args = {spec.cfg.path};
  if (spec.memory.kind() == MemoryLimit::Kind::Rlimit)
    cs.args.insert(cs.args.end(), {"--memory-mb", std::to_string(spec.memory.mb())});
  auto strand = asio::make_strand(host->io());
  // Forked from a loop thread (this coroutine runs on one): the child dies
  // with the thread that forked it, and the loop's threads last as long as
  // the gateway.
  auto child = transport::ChildProcess::spawn(strand, cs);
  if (!child) co_return Error{where + ": cannot start its host process: " + child.error()};
  std::shared_ptr<HostProcess> hp(new HostProcess(std::move(host), std::move(spec), strand, std::move(*child)));
  // The host loads no plugin before its Init frame: in its group by then,
  // nothing of the plugin's runs unlimited.
  if (hp->spec_.memory.kind() == MemoryLimit::Kind::Cgroup) {
    auto group = hp->spec_.memory.group_for(hp->pid());
    if (!group) {
      hp->child_->stop(0ms);
      co_return Error{where + ": cannot put its host process in a cgroup of its own (memory_mb): " + group.error()};
    }
    hp->cgroup_ = *group;
    // Removed once the host is reaped, whoever lets go of it last.
    hp->child_->on_exit([group = *group](const std::string&) {});
  }
  hp->begin();
  hp->send(ph::Type::Init, 0, 0, {hp->spec_.cfg.config_json});
  for (;;) {
    const auto seen = hp->changed_.generation();
    {
      util::MutexLock lk(hp->mu_);
      if (hp->hello_) {
        Hello hello = *hp->hello_;
        hp->spec_.label = hello.name;
        co_return std::pair{hp, std::move(hello)};
      }
      if (hp->refused_) co_return Error{where + *hp->refused_};
      if (hp->dead_) co_return Error{where + ": " + *hp->dead_ + " before init and list_tools ended"};
    }
    if (!co_await hp->changed_.wait(seen, deadline)) {
      hp->kill("killed: init and list_tools did not end within timeout_ms");
      co_return Error{where + ": init and list_tools did not end within timeout_ms (" +
                      std::to_string(hp->spec_.cfg.timeout_ms) + " ms); its host process was killed"};
    }
  }
}

void HostProcess::begin() {
  auto self = shared_from_this();
  // Weak: the child's exit handlers live as long as the child, which this
  // object owns; a host outliving the loop must not keep it forever.
  child_->on_exit([weak = weak_from_this()](const std::string&) {
    auto self = weak.lock();
    if (!self) return;
    // What it wrote before it died (a refusal, results) is read first: its
    // exit and its last frames arrive in either order.
    asio::co_spawn(
        self->strand_,
        [self]() -> Task<> {
          const auto bound = std::chrono::steady_clock::now() + kStopGrace;
          for (;;) {
            const auto seen = self->changed_.generation();
            {
              util::MutexLock lk(self->mu_);
              if (self->frames_ended_) break;
            }
            if (!co_await self->changed_.wait(seen, bound)) break;
          }
          self->died(self->exit_cause());
        },
        asio::detached);
  });
  asio::co_spawn(strand_, [self]() { return self->read_frames(); }, asio::detached);
  asio::co_spawn(strand_, [self]() { return self->read_stderr(); }, asio::detached);
}

void HostProcess::send(ph::Type type, std::uint64_t id, std::uint64_t sub,
                       std::initializer_list<std::optional<std::string_view>> fields) {
  {
    util::MutexLock lk(mu_);
    if (dead_) return;
    ph::encode(outbox_, type, id, sub, fields);
    if (writing_) return;
    writing_ = true;
  }
  // Unlocked: the writer may start at once, in this thread, and take mu_.
  asio::co_spawn(strand_, [self = shared_from_this()]() { return self->write_out(); }, asio::detached);
}

Task<> HostProcess::write_out() {
  std::string buf;
  for (;;) {
    buf.clear();
    {
      util::MutexLock lk(mu_);
      buf.swap(outbox_);
      if (buf.empty()) {
        writing_ = false;
        co_return;
      }
    }
    auto [ec, n] = co_await asio::async_write(child_->in(), asio::buffer(buf), kAwait);
    if (ec) {
      // Closed by stop(), or the host is gone: its exit tells the calls.
      util::MutexLock lk(mu_);
      outbox_.clear();
      writing_ = false;
      co_return;
    }
  }
}

Task<> HostProcess::read_frames() {
  ph::Decoder dec;
  ph::Frame f;
  std::vector<char> buf(64 * 1024);
  for (;;) {
    auto [ec, n] = co_await child_->out().async_read_some(asio::buffer(buf), kAwait);
    if (ec) {
      // Its exit follows (or came first and waits for this).
      {
        util::MutexLock lk(mu_);
        frames_ended_ = true;
      }
      changed_.notify();
      co_return;
    }
    dec.feed(std::string_view(buf.data(), n));
    for (;;) {
      auto st = dec.next(f);
      if (st == ph::Decoder::Status::More) break;
      if (st == ph::Decoder::Status::Broken) {
        kill("killed: it broke the plugin host protocol");
        {
          util::MutexLock lk(mu_);
          frames_ended_ = true;
        }
        changed_.notify();
        co_return;
      }
      handle(f);
    }
  }
}

Task<> HostProcess::read_stderr() {
  transport::SkippingLineBuffer lines(kMaxOutputLine);
  std::vector<char> buf(16 * 1024);
  auto report_suppressed = [this] {
    if (auto n = log_gate_.take_suppressed())
      spdlog::warn("plugin {}: {} lines of its output suppressed (it wrote more than {} a second)", spec_.label, n,
                   upstream::LogGate::kRate);
  };
  auto line = [&](std::string_view l) {
    if (!log_gate_.admit(std::chrono::steady_clock::now())) return;
    report_suppressed();
    spdlog::info("plugin {} output: {}", spec_.label, l);
  };
  for (;;) {
    auto [ec, n] = co_await child_->err().async_read_some(asio::buffer(buf), kAwait);
    if (ec) break;
    lines.feed(std::string_view(buf.data(), n), line, [&](std::string_view head, std::string_view, std::size_t size) {
      line(std::string(head.substr(0, 200)) + "... (" + std::to_string(size) + " bytes, cut)");
    });
  }
  report_suppressed();
}

void HostProcess::handle(ph::Frame& f) {
  switch (f.type) {
    case ph::Type::Ready: {
      util::MutexLock lk(mu_);
      hello_ = Hello{std::string(f.text(0)), std::string(f.text(1)), std::string(f.text(2))};
      break;
    }
    case ph::Type::Failed: {
      util::MutexLock lk(mu_);
      refused_ = std::string(f.text(0));
      break;
    }
    case ph::Type::Log:
      if (log_gate_.admit(std::chrono::steady_clock::now()))
        log_line(spec_.label, f.text(0).empty() ? 1 : f.text(0)[0] - '0', f.text(1));
      return;
    case ph::Type::Result: {
      std::shared_ptr<Pending> p;
      {
        util::MutexLock lk(mu_);
        auto it = pending_.find(f.id);
        if (it == pending_.end()) return;
        p = it->second;
        pending_.erase(it);
        served_ = true;
        const std::string_view st = f.text(0);
        using K = Outcome::Kind;
        if (st == "ok") p->outcome = Outcome{K::Result, std::string(f.text(1))};
        else if (st == "null") p->outcome = Outcome{K::NoResult, {}};
        else if (st == "oom")
          p->outcome = Outcome{K::Failed, "plugin " + spec_.label + ": tool " + p->tool +
                                              " ran out of memory (memory_mb: " + std::to_string(spec_.cfg.memory_mb) +
                                              "); its host process is replaced"};
        else p->outcome = Outcome{K::Threw, {}};
      }
      p->changed.notify();
      return;
    }
    case ph::Type::Upstream: upstream_call(f); return;
    default: return;
  }
  changed_.notify();
}

void HostProcess::upstream_call(ph::Frame& f) {
  std::shared_ptr<Pending> p;
  {
    util::MutexLock lk(mu_);
    if (auto it = pending_.find(f.id); it != pending_.end() && !it->second->outcome) {
      p = it->second;
      p->called.emplace_back(f.text(0));
      ++p->upstream_running;
    }
  }
  if (!p) {
    send(ph::Type::UpstreamDone, f.id, f.sub, {json::write(mcp::tool_error("mcpgw: the plugin's call has ended"))});
    return;
  }
  auto copy = [&](std::size_t i) { return f.c_str(i) ? std::optional<std::string>(f.c_str(i)) : std::nullopt; };
  auto c = [](const std::optional<std::string>& s) { return s ? s->c_str() : nullptr; };
  asio::co_spawn(
      asio::make_strand(host_->io()),
      [self = shared_from_this(), p, c, id = f.id, sub = f.sub, server = copy(0), tool = copy(1),
       args = copy(2)]() -> Task<> {
        // The call's options live as long as its call(), which waits for this.
        std::string r = co_await call_upstream(*self->host_, *p->opts, c(server), c(tool), c(args));
        self->send(ph::Type::UpstreamDone, id, sub, {r});
        {
          util::MutexLock lk(self->mu_);
          --p->upstream_running;
        }
        p->changed.notify();
      },
      asio::detached);
}

Task<Outcome> HostProcess::call(const Run& run, const upstream::CallOptions& opts,
                                std::chrono::steady_clock::time_point deadline) {
  auto p = std::make_shared<Pending>();
  p->tool = run.tool;
  p->opts = &opts;
  std::uint64_t id;
  {
    util::MutexLock lk(mu_);
    if (dead_) co_return Outcome{Outcome::Kind::Failed, lost_message(*p, *dead_)};
    if (killing_) co_return Outcome{Outcome::Kind::Failed, lost_message(*p, "its host process was " + *killing_)};
    id = next_id_++;
    pending_[id] = p;
  }
  const std::string principal = opts.caller ? opts.caller->principal : "";
  const std::string mode = opts.caller && !opts.caller->mode.empty() ? opts.caller->mode : "all";
  send(ph::Type::Call, id, 0, {run.tool, run.arguments, run.answers, run.state, principal, mode});
  CancelSignal::Subscription cancelled;
  if (opts.cancel)
    cancelled = opts.cancel->on_cancel([weak = weak_from_this(), id] {
      if (auto self = weak.lock()) self->send(ph::Type::Cancel, id, 0, {});
    });
  bool timed_out = false;
  for (;;) {
    const auto seen = p->changed.generation();
    {
      util::MutexLock lk(mu_);
      if (p->outcome && p->upstream_running == 0) break;
    }
    if (!timed_out && std::chrono::steady_clock::now() >= deadline) {
      // Plugin code cannot be interrupted: the host goes, and with it the
      // other calls in it.
      timed_out = true;
      const std::string ms = std::to_string(spec_.cfg.timeout_ms);
      {
        util::MutexLock lk(mu_);
        if (!p->outcome) {
          p->outcome = Outcome{Outcome::Kind::Failed,
                               lost_message(*p, "it ran past timeout_ms (" + ms + " ms); its host process is replaced")};
          pending_.erase(id);
        }
      }
      kill("killed: tool " + run.tool + " ran past timeout_ms (" + ms + " ms)");
      continue;
    }
    co_await p->changed.wait(seen, timed_out ? std::chrono::steady_clock::time_point::max() : deadline);
  }
  cancelled.reset();
  util::MutexLock lk(mu_);
  co_return std::move(*p->outcome);
}

void HostProcess::on_death(std::function<void(const std::string&)> fn) {
  util::UniqueLock lk(mu_);
  if (!dead_ && !killing_) {
    on_death_ = std::move(fn);
    return;
  }
  std::string why = dead_ ? *dead_ : "its host process was " + *killing_;
  bool stopping = stopping_;
  lk.unlock();
  if (!stopping) fn(why);
}

bool HostProcess::served() const {
  util::MutexLock lk(mu_);
  return served_;
}

void HostProcess::stop() {
  {
    util::MutexLock lk(mu_);
    stopping_ = true;
  }
  child_->stop(kStopGrace);
}

void HostProcess::kill(const std::string& why) {
  std::function<void(const std::string&)> told;
  {
    util::MutexLock lk(mu_);
    if (dead_ || killing_) return;
    killing_ = why;
    if (!stopping_) told = std::move(on_death_);
  }
  // Not reaped yet (its exit is handled on this object's strand, after
  // killing_ is set), so the process group is still the host's.
  if (!child_->status()) ::kill(-child_->pid(), SIGKILL);
  // The supervisor stops sending it calls now, before the caller that
  // killed it answers its client: that client's next call finds the next
  // host, not this one. Its calls in flight fail once its exit is seen.
  if (told) told("its host process was " + why);
}

std::string HostProcess::exit_cause() const {
  if (int sig = child_->term_signal()) {
    const char* abbrev = sigabbrev_np(sig);
    const char* text = strsignal(sig);
    std::string out = "its host process was killed by signal " +
                      (abbrev ? "SIG" + std::string(abbrev) : std::to_string(sig)) +
                      (text ? " (" + std::string(text) + ")" : "");
    if (cgroup_ && cgroup_->oom_killed())
      out += ": it ran out of memory (memory_mb: " + std::to_string(spec_.cfg.memory_mb) + ", cgroup memory.max)";
    return out;
  }
  int code = child_->exit_code();
  return code == 0 ? std::string("its host process exited") : "its host process exited with status " + std::to_string(code);
}

std::string HostProcess::lost_message(const Pending& p, const std::string& why) const {
  std::string out = "plugin " + spec_.label + ": tool " + p.tool + " failed: " + why;
  if (p.called.empty()) return out;
  out += "; it had called server";
  out += p.called.size() > 1 ? "s " : " ";
  for (std::size_t i = 0; i < p.called.size(); ++i) out += (i ? ", " : "") + p.called[i];
  return out + ", so it may have run (it is not run again)";
}

void HostProcess::died(const std::string& status) {
  std::map<std::uint64_t, std::shared_ptr<Pending>> lost;
  std::function<void(const std::string&)> told;
  std::string why;
  {
    util::MutexLock lk(mu_);
    if (dead_) return;
    why = killing_ ? "its host process was " + *killing_ : status;
    dead_ = why;
    lost.swap(pending_);
    if (!stopping_) told = std::move(on_death_);
    outbox_.clear();
  }
  // The supervisor first, so that no caller told of this death can reach
  // this host again with its next call.
  if (told) told(why);
  for (auto& [id, p] : lost) {
    {
      util::MutexLock lk(mu_);
      if (!p->outcome) p->outcome = Outcome{Outcome::Kind::Failed, lost_message(*p, why)};
    }
    p->changed.notify();
  }
  changed_.notify();
}

}  // namespace mcpgw::plugin
