// The gateway's side of tool integrity (docs/operations.md, "Tool
// integrity"): the pins' store, what each catalog build is given and what
// it decided (logged once per definition, audited, counted), and the pins
// changing under a running gateway (`mcpgw pins approve`, a replica).
#include <spdlog/spdlog.h>

#include <set>

#include "server/gateway.hpp"

namespace mcpgw::server {
namespace {

integrity::Mode mode_of(const config::Config& cfg) {
  switch (cfg.integrity.pins) {
    case config::Integrity::Pins::Off: return integrity::Mode::Off;
    case config::Integrity::Pins::Warn: return integrity::Mode::Warn;
    case config::Integrity::Pins::Block: return integrity::Mode::Block;
  }
  return integrity::Mode::Off;
}

std::string joined(const std::vector<std::string>& items, std::string_view sep = ", ") {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : std::string(sep)) + i;
  return out;
}

/// What the log and the audit say of a report.
std::string what_changed(const integrity::ToolReport& r) {
  std::string out = joined(r.changes);
  for (const auto& f : r.findings) out += "; hidden instructions: " + integrity::describe(f);
  return out;
}

}  // namespace

std::string integrity_warning(const integrity::ToolReport& r) {
  return "integrity: tool " + r.tool + " of server " + r.server + " is " + std::string(integrity::name_of(r.state)) +
         " (" + what_changed(r) + ")" +
         (r.withheld ? "; withheld until approved (mcpgw pins approve " + r.tool + ")" : "; served (pins: warn)");
}

std::shared_ptr<integrity::Store> Gateway::make_pin_store(const config::Config& cfg) {
  if (!cfg.cluster.redis.empty()) return cluster_->pin_store();
  if (!cfg.integrity.store.empty()) {
    auto file = integrity::FileStore::open(cfg.integrity.store, &io_.context());
    if (file) return *file;
    // The gateway serves meanwhile; what the pins decide is withheld under
    // block until the file reads (a SIGHUP tries again).
    spdlog::error("integrity.store: {}", file.error());
    startup_error_ = startup_error_.empty() ? "integrity.store: " + file.error() : startup_error_;
    return nullptr;
  }
  return std::make_shared<integrity::MemoryStore>();
}

void Gateway::start_pins() {
  if (!pins_->store()) return;
  pins_->store()->watch([this] { pins_changed(); });
  // Redis is read once its connections hold (the store is told then):
  // asked now, before start_cluster(), it could only fail.
  if (!cluster_->redis()) pins_->reload();
}

Result<void> Gateway::await_pins(std::chrono::milliseconds timeout) {
  // pins: off judges nothing: Redis is not waited for.
  if (config()->integrity.pins == config::Integrity::Pins::Off || !pins_->store() || pins_->await_read(timeout)) return {};
  // Unreachable Redis is never asked: its connection says why.
  std::string why = cluster_->redis() && !cluster_->health().redis_up ? cluster_->health().status : pins_->why();
  return Error{"integrity: the pins could not be read from " + pins_->store()->describe() + " within " +
               std::to_string(timeout.count() / 1000) + " s (" + why + ")"};
}

void Gateway::pins_changed() {
  // Read and rebuild off the loop: a file is read with blocking calls.
  auto work = [this] { pins_->reload([this] { on_tools_changed(kPinsChanged); }); };
  if (!rebuilds_ || !rebuilds_->submit(work)) work();
}

catalog::IntegrityInput Gateway::integrity_input(const config::Config& cfg) const {
  catalog::IntegrityInput in;
  in.mode = mode_of(cfg);
  in.strip_invisible = cfg.integrity.strip_invisible;
  in.ledger = pins_->ledger();
  in.why = pins_->store() ? pins_->why() : "integrity.store cannot be read";
  in.now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                  .count();
  in.scanner = &scanner_;
  return in;
}

void Gateway::integrity_reported(const catalog::Snapshot& old, const catalog::Snapshot& next) {
  const auto& view = next.integrity;
  pins_->record(view.changes);
  metrics_.set_withheld(static_cast<double>(view.withheld.size()));
  if (view.unread) {
    // One line, not one per tool: nothing was judged against a pin.
    if (view.reports.size() != (old.integrity.unread ? old.integrity.reports.size() : 0))
      spdlog::warn("integrity: the pins are not read yet ({}); {} server tools count as new{}", pins_->why(),
                   view.reports.size(), view.mode == integrity::Mode::Block ? " and are withheld" : "");
    return;
  }
  std::set<std::string> known;
  for (const auto& r : old.integrity.reports) known.insert(r.server + '\n' + r.tool + '\n' + r.digest);
  for (const auto& r : view.reports) {
    if (known.count(r.server + '\n' + r.tool + '\n' + r.digest)) continue;
    const std::string state(integrity::name_of(r.state));
    spdlog::warn("{}", integrity_warning(r));
    metrics_.integrity_change(r.server, state);
    AuditRecord a;
    a.event = "integrity";
    a.tool = r.tool;
    a.server = r.server;
    a.outcome = r.withheld ? "withheld" : "served";
    a.reason = state + ": " + what_changed(r);
    router_.audit().record(a);
  }
  std::set<std::string> stripped(old.integrity.stripped.begin(), old.integrity.stripped.end());
  for (const auto& s : view.stripped)
    if (!stripped.count(s)) spdlog::warn("integrity: invisible characters removed from {}", s);
}

}  // namespace mcpgw::server
