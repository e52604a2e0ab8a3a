#include "plugin/isolated.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "util/offload.hpp"

namespace mcpgw::plugin {

using namespace std::chrono_literals;

namespace {
constexpr std::chrono::milliseconds kFirstBackoff = 100ms;
constexpr std::chrono::milliseconds kMaxBackoff = 5000ms;
/// A host that served this long before dying starts the backoff afresh.
constexpr auto kStableAfter = 10s;
}  // namespace

std::string host_program() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "mcpgw-plugin-host";
  // A build tree has it next to mcpgw; an installed mcpgw (bin/) in the
  // package's private directory, lib/mcpgw/.
  auto beside = self.parent_path() / "mcpgw-plugin-host";
  if (std::filesystem::exists(beside, ec)) return beside.string();
  return (self.parent_path().parent_path() / "lib" / "mcpgw" / "mcpgw-plugin-host").string();
}

Isolated::Isolated(std::shared_ptr<Host> host, HostSpec spec)
    : host_(std::move(host)), spec_(std::move(spec)), backoff_(kFirstBackoff) {}

Isolated::~Isolated() {
  std::shared_ptr<HostProcess> hp;
  {
    util::MutexLock lk(mu_);
    stopped_ = true;
    hp = std::move(current_);
  }
  if (hp) hp->stop();
}

Result<Isolated::Opened> Isolated::open(const config::Plugin& cfg, std::shared_ptr<Host> host) {
  HostSpec spec{host_program(), cfg, cfg.path, MemoryLimit::choose(cfg.memory_mb)};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg.timeout_ms);
  auto started = block_on(asio::make_strand(host->io()), HostProcess::start(host, spec, deadline),
                          []() -> Result<std::pair<std::shared_ptr<HostProcess>, Hello>> {
                            return Error{"mcpgw is shutting down"};
                          });
  if (!started) return Error{started.error()};
  auto& [hp, hello] = *started;
  spec.label = hello.name;
  spdlog::info("plugin {}: memory_mb {} enforced by {}", spec.label, cfg.memory_mb, spec.memory.description());
  // Not make_shared: the constructor is private to keep open() the only way in.
  std::shared_ptr<Isolated> engine(new Isolated(std::move(host), std::move(spec)));
  engine->adopt(hp);
  return Opened{std::move(engine), std::move(hello)};
}

void Isolated::adopt(const std::shared_ptr<HostProcess>& hp) {
  {
    util::MutexLock lk(mu_);
    current_ = hp;
    failures_ = 0;
    down_.clear();
  }
  const HostProcess* raw = hp.get();
  hp->on_death([weak = weak_from_this(), raw](const std::string& why) {
    if (auto self = weak.lock()) self->lost(raw, why);
  });
  changed_.notify();
}

void Isolated::lost(const HostProcess* hp, const std::string& why) {
  std::chrono::milliseconds delay;
  {
    util::MutexLock lk(mu_);
    if (stopped_ || current_.get() != hp) return;
    // A host that answered calls, or ran a while, started well: the next
    // one starts at once; only hosts dying young back off further.
    if (hp->served() || std::chrono::steady_clock::now() - hp->started() >= kStableAfter) backoff_ = kFirstBackoff;
    current_.reset();
    delay = backoff_;
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  }
  spdlog::error("plugin {}: {}; starting it again in {} ms", spec_.label, why, delay.count());
  schedule(delay);
}

void Isolated::schedule(std::chrono::milliseconds delay) {
  asio::co_spawn(
      asio::make_strand(host_->io()),
      [weak = weak_from_this(), delay]() -> Task<> {
        asio::steady_timer timer(co_await asio::this_coro::executor, delay);
        co_await timer.async_wait(asio::use_awaitable);
        if (auto self = weak.lock()) co_await self->restart();
      },
      [](std::exception_ptr) {});
}

Task<> Isolated::restart() {
  {
    util::MutexLock lk(mu_);
    if (stopped_) co_return;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(spec_.cfg.timeout_ms);
  auto started = co_await HostProcess::start(host_, spec_, deadline);
  if (started) {
    auto hp = started->first;
    bool stopped;
    {
      util::MutexLock lk(mu_);
      stopped = stopped_;
    }
    if (stopped) {
      hp->stop();
      co_return;
    }
    adopt(hp);
    spdlog::info("plugin {}: host process started again (pid {})", spec_.label, hp->pid());
    co_return;
  }
  std::chrono::milliseconds delay;
  bool went_down = false;
  {
    util::MutexLock lk(mu_);
    ++failures_;
    if (failures_ >= kDownAfter) {
      went_down = down_.empty();
      down_ = started.error();
    }
    delay = backoff_;
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  }
  if (went_down)
    spdlog::error("plugin {} is down: {} ({} starts in a row failed; trying again every {} ms at most)", spec_.label,
                  started.error(), kDownAfter, kMaxBackoff.count());
  else
    spdlog::error("plugin {}: starting it again failed: {}; trying again in {} ms", spec_.label, started.error(),
                  delay.count());
  changed_.notify();
  schedule(delay);
}

Task<Outcome> Isolated::call(const Run& run, const upstream::CallOptions& opts,
                             std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto seen = changed_.generation();
    std::shared_ptr<HostProcess> hp;
    std::string down;
    {
      util::MutexLock lk(mu_);
      hp = current_;
      down = down_;
    }
    if (hp) co_return co_await hp->call(run, opts, deadline);
    if (!down.empty()) co_return Outcome{Outcome::Kind::Failed, "plugin " + spec_.label + " is down: " + down};
    if (opts.cancel && opts.cancel->cancelled())
      co_return Outcome{Outcome::Kind::Failed,
                        "plugin " + spec_.label + ": tool " + run.tool + " was cancelled while its host was restarting"};
    if (!co_await changed_.wait(seen, deadline, opts.cancel))
      co_return Outcome{Outcome::Kind::Failed, "plugin " + spec_.label + ": tool " + run.tool +
                                                   " failed: its host process is restarting and was not back within "
                                                   "timeout_ms (" +
                                                   std::to_string(spec_.cfg.timeout_ms) + " ms)"};
  }
}

std::string Isolated::down() const {
  util::MutexLock lk(mu_);
  return down_;
}

int Isolated::pid() const {
  util::MutexLock lk(mu_);
  return current_ ? current_->pid() : 0;
}

}  // namespace mcpgw::plugin
