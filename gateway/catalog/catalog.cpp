#include "catalog/catalog.hpp"

#include <spdlog/spdlog.h>

#include "catalog/naming.hpp"

namespace mcpgw::catalog {

const ExposedTool* Snapshot::find(std::string_view name) const {
  auto it = index.find(std::string(name));
  return it == index.end() ? nullptr : &tools[it->second];
}

std::shared_ptr<const Snapshot> build(const config::Config& cfg,
                                      const std::vector<std::shared_ptr<upstream::Upstream>>& upstreams,
                                      std::uint64_t generation) {
  auto snap = std::make_shared<Snapshot>();
  snap->generation = generation;
  for (const auto& up : upstreams) {
    const auto& sc = up->config();
    if (!sc.proxy_tools) continue;
    auto set = up->tools();
    for (const auto& t : set->tools.GetArray()) {
      std::string uname(json::get_string(t, "name").value_or(""));
      std::string name = exposed_name(cfg.naming, sc.name, uname, sc.prefix);
      if (auto prev = snap->index.find(name); prev != snap->index.end()) {
        snap->warnings.push_back("tool \"" + name + "\" of server " + sc.name + " collides with the one of server " +
                                 snap->tools[prev->second].origin->name() + "; keeping the first");
        continue;
      }
      json::Document def;
      def.CopyFrom(t, def.GetAllocator());
      auto& a = def.GetAllocator();
      json::set(def, "name", json::str(name, a), a);
      std::string desc = exposed_description(cfg.naming, sc.name, json::get_string(t, "description").value_or(""));
      json::set(def, "description", json::str(desc, a), a);
      snap->index.emplace(name, snap->tools.size());
      snap->tools.push_back({std::move(name), up, std::move(uname), json::write(def)});
    }
  }
  return snap;
}

std::shared_ptr<const Snapshot> Catalog::snapshot() const {
  std::lock_guard lk(mu_);
  return current_;
}

void Catalog::publish(std::shared_ptr<const Snapshot> s) {
  for (const auto& w : s->warnings) spdlog::warn("catalog: {}", w);
  std::lock_guard lk(mu_);
  current_ = std::move(s);
}

}  // namespace mcpgw::catalog
