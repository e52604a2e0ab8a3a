#include "server/check_search.hpp"

#include <cstdio>

#include "catalog/tool_search.hpp"
#include "server/tool_search.hpp"

namespace mcpgw::server {
namespace {

const char* discovery_of(const catalog::Snapshot& s, std::size_t mode) {
  return mode < s.search_modes.size() && s.search_modes[mode] ? "search" : "all";
}

/// What `query` finds in `mode`, as search_tools would answer it (empty for
/// a query it answers with the overview).
std::vector<search::Hit> found(const catalog::Snapshot& s, std::size_t mode, const std::string& query) {
  if (!catalog::meaningful_query(s, query)) return {};
  return catalog::find_tools(s, mode, query, kDefaultSearchLimit);
}

}  // namespace

void add_search_report(const catalog::Snapshot& s, const std::optional<std::string>& query, json::Document& d) {
  auto& a = d.GetAllocator();
  json::Value discovery(rapidjson::kArrayType);
  for (std::size_t m = 0; m < s.modes.size(); ++m) {
    json::Value e(rapidjson::kObjectType);
    e.AddMember("mode", json::str(s.modes[m], a), a);
    e.AddMember("discovery", json::str(discovery_of(s, m), a), a);
    discovery.PushBack(e, a);
  }
  d.AddMember("discovery", discovery, a);
  if (!query) return;
  json::Value modes(rapidjson::kArrayType);
  for (std::size_t m = 0; m < s.modes.size(); ++m) {
    json::Value tools(rapidjson::kArrayType);
    for (const auto& h : found(s, m, *query)) {
      json::Value t(rapidjson::kObjectType);
      t.AddMember("name", json::str(s.tools[h.doc].name, a), a);
      t.AddMember("score", h.score, a);
      tools.PushBack(t, a);
    }
    json::Value e(rapidjson::kObjectType);
    e.AddMember("mode", json::str(s.modes[m], a), a);
    e.AddMember("tools", tools, a);
    modes.PushBack(e, a);
  }
  json::Value search(rapidjson::kObjectType);
  search.AddMember("query", json::str(*query, a), a);
  search.AddMember("modes", modes, a);
  d.AddMember("search", search, a);
}

void print_search_report(const catalog::Snapshot& s, const std::optional<std::string>& query, std::ostream& out) {
  out << "\ndiscovery by mode:\n";
  for (std::size_t m = 0; m < s.modes.size(); ++m) out << "  " << s.modes[m] << ": " << discovery_of(s, m) << "\n";
  if (!query) return;
  out << "\nsearch \"" << *query << "\" (best " << kDefaultSearchLimit << " per mode):\n";
  for (std::size_t m = 0; m < s.modes.size(); ++m) {
    auto hits = found(s, m, *query);
    out << "  " << s.modes[m] << ":" << (hits.empty() ? " nothing matches (search_tools answers with the overview)" : "")
        << "\n";
    for (std::size_t i = 0; i < hits.size(); ++i) {
      char score[32];
      std::snprintf(score, sizeof score, "%.2f", hits[i].score);
      out << "    " << i + 1 << ". " << s.tools[hits[i].doc].name << " (" << score << ")\n";
    }
  }
}

}  // namespace mcpgw::server
