#include "server/pins_cli.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <future>
#include <optional>
#include <thread>

#include "cluster/cluster.hpp"
#include "util/iso8601.hpp"

namespace mcpgw::server {
namespace {

/// The configured store, open for one command: a file, or Redis on a loop
/// of its own (connected before anything is asked of it).
class OpenStore {
 public:
  explicit OpenStore(const config::Config& cfg) {
    if (!cfg.cluster.redis.empty()) {
      cluster_ = std::make_unique<cluster::Cluster>(cfg.cluster, io_);
      store_ = cluster_->pin_store();
      // The store is told once both connections hold.
      auto up = std::make_shared<std::promise<void>>();
      auto told = std::make_shared<std::once_flag>();
      store_->watch([up, told] { std::call_once(*told, [&] { up->set_value(); }); });
      auto connected = up->get_future();
      thread_ = std::thread([this] { io_.run(); });
      cluster_->start();
      if (connected.wait_for(std::chrono::seconds(10)) != std::future_status::ready)
        error_ = "cannot reach Redis (" + cfg.cluster.redis_host + ":" + std::to_string(cfg.cluster.redis_port) +
                 ") within 10 s: " + cluster_->health().status;
      return;
    }
    if (cfg.integrity.store.empty()) {
      error_ = "the pins are kept in the gateway's memory only (integrity.store is empty and cluster.redis unset); "
               "set integrity.store to a file to list and approve them from the command line";
      return;
    }
    auto file = integrity::FileStore::open(cfg.integrity.store, nullptr);
    if (!file) error_ = file.error();
    else store_ = *file;
  }
  ~OpenStore() {
    if (store_) store_->stop();
    if (cluster_) cluster_->stop();
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }
  OpenStore(const OpenStore&) = delete;
  OpenStore& operator=(const OpenStore&) = delete;

  const std::string& error() const { return error_; }

  Result<integrity::Ledger> load() {
    std::promise<Result<integrity::Ledger>> p;
    store_->load([&](Result<integrity::Ledger> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }

  Result<void> save(std::vector<integrity::Change> changes) {
    std::promise<Result<void>> p;
    store_->save(std::move(changes), [&](Result<void> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ = boost::asio::make_work_guard(io_);
  std::unique_ptr<cluster::Cluster> cluster_;
  std::shared_ptr<integrity::Store> store_;
  std::thread thread_;
  std::string error_;
};

std::string joined(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : std::string(sep)) + i;
  return out;
}

/// The pins in `store`, or nullopt with why not written to `err`.
std::optional<integrity::Ledger> read_ledger(OpenStore& store, std::ostream& err) {
  std::string why = store.error();
  if (why.empty()) {
    auto ledger = store.load();
    if (ledger) return std::move(*ledger);
    why = ledger.error();
  }
  err << "mcpgw: pins: " << why << "\n";
  return std::nullopt;
}

}  // namespace

int run_pins_list(const config::Config& cfg, bool as_json, std::ostream& out, std::ostream& err) {
  OpenStore store(cfg);
  auto ledger = read_ledger(store, err);
  if (!ledger) return 1;
  json::Document d(rapidjson::kArrayType);
  auto& a = d.GetAllocator();
  std::vector<std::array<std::string, 5>> rows{{"SERVER", "TOOL", "STATE", "WHEN", "WHAT"}};
  for (const auto& [server, tools] : ledger->servers)
    for (const auto& [tool, r] : tools) {
      const auto& when = r.seen ? r.seen : r.pin;
      std::string state(integrity::name_of(r.state()));
      std::string what = joined(r.changes, ", ");
      if (!r.findings.empty()) what += (what.empty() ? "" : "; ") + std::string("hidden instructions: ") + joined(r.findings, "; ");
      if (!r.seen && r.pin) what = "pinned (" + r.pin->how + ")";
      rows.push_back({server, tool, state, when ? iso8601(when->at_ms) : "", what});
      json::Value e(rapidjson::kObjectType);
      e.AddMember("server", json::str(server, a), a);
      e.AddMember("tool", json::str(tool, a), a);
      e.AddMember("state", json::str(state, a), a);
      e.AddMember("when", json::str(rows.back()[3], a), a);
      json::Value changes(rapidjson::kArrayType), findings(rapidjson::kArrayType);
      for (const auto& c : r.changes) changes.PushBack(json::str(c, a), a);
      for (const auto& f : r.findings) findings.PushBack(json::str(f, a), a);
      e.AddMember("changes", changes, a);
      e.AddMember("findings", findings, a);
      if (r.pin) e.AddMember("pinned", json::str(iso8601(r.pin->at_ms), a), a);
      d.PushBack(e, a);
    }
  if (as_json) {
    out << json::write(d) << "\n";
    return 0;
  }
  std::array<std::size_t, 4> width{};
  for (const auto& row : rows)
    for (std::size_t i = 0; i < 4; ++i) width[i] = std::max(width[i], row[i].size());
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < 4; ++i) out << row[i] << std::string(width[i] - row[i].size() + 2, ' ');
    out << row[4] << "\n";
  }
  return 0;
}

int run_pins_approve(const config::Config& cfg, const integrity::Selection& sel, std::ostream& out, std::ostream& err) {
  if (sel.names.empty() && sel.server.empty() && !sel.all) {
    err << "mcpgw: pins approve: name the tools, or give --server S or --all\n";
    return 2;
  }
  OpenStore store(cfg);
  auto ledger = read_ledger(store, err);
  if (!ledger) return 1;
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  auto changes = integrity::approve(*ledger, sel, now.count());
  if (!changes) {
    err << "mcpgw: pins approve: " << changes.error() << "\n";
    return 1;
  }
  if (changes->empty()) {
    out << "nothing to approve: every selected tool is pinned as listed\n";
    return 0;
  }
  std::vector<std::string> names;
  for (const auto& c : *changes) names.push_back(c.tool + " (server " + c.server + ")");
  if (auto saved = store.save(std::move(*changes)); !saved) {
    err << "mcpgw: pins approve: " << saved.error() << "\n";
    return 1;
  }
  for (const auto& n : names) out << "approved " << n << "\n";
  return 0;
}

}  // namespace mcpgw::server
