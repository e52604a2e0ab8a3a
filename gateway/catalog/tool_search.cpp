#include "catalog/tool_search.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

namespace mcpgw::catalog {
namespace {

constexpr std::string_view kServerWord = "server:";

/// The query split into `server:NAME` words and the rest.
struct Parsed {
  std::vector<std::string_view> servers;
  std::string words;
};

Parsed parse(std::string_view query) {
  Parsed p;
  std::size_t i = 0;
  while (i < query.size()) {
    while (i < query.size() && std::isspace(static_cast<unsigned char>(query[i]))) ++i;
    std::size_t start = i;
    while (i < query.size() && !std::isspace(static_cast<unsigned char>(query[i]))) ++i;
    std::string_view word = query.substr(start, i - start);
    if (word.size() > kServerWord.size() && word.substr(0, kServerWord.size()) == kServerWord) {
      p.servers.push_back(word.substr(kServerWord.size()));
    } else if (!word.empty()) {
      if (!p.words.empty()) p.words += ' ';
      p.words += word;
    }
  }
  return p;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// The text of the parameters of an inputSchema: each property's name and
/// description, one level of nesting deep.
void parameters_of(const json::Value& schema, std::string& out, int depth) {
  const json::Value* props = json::find(schema, "properties");
  if (!props || !props->IsObject()) return;
  for (const auto& p : props->GetObject()) {
    out.append(p.name.GetString(), p.name.GetStringLength());
    out += ' ';
    if (auto d = json::get_string(p.value, "description")) {
      out += *d;
      out += ' ';
    }
    if (depth == 0 && p.value.IsObject()) parameters_of(p.value, out, depth + 1);
  }
}

}  // namespace

const std::string_view kSearchSyntax =
    "Describe the task in a few words (e.g. \"account balance\"); add server:NAME to search one server's tools "
    "only (alone, it lists them); the exact name of a tool finds that tool.";

bool is_meta_tool(std::string_view name) { return name == kSearchTools || name == kCallTool; }

search::Document document_of(const json::Value& def, std::string_view name) {
  search::Document d;
  d.name = std::string(name);
  d.title = std::string(json::get_string(def, "title").value_or(""));
  if (d.title.empty())
    if (const json::Value* a = json::find(def, "annotations"))
      d.title = std::string(json::get_string(*a, "title").value_or(""));
  d.description = std::string(json::get_string(def, "description").value_or(""));
  if (const json::Value* schema = json::find(def, "inputSchema"); schema && schema->IsObject())
    parameters_of(*schema, d.parameters, 0);
  return d;
}

std::vector<search::Hit> find_tools(const Snapshot& s, std::size_t mode, std::string_view query, std::size_t limit,
                                    const std::vector<bool>* permitted) {
  if (mode >= s.modes.size() || limit == 0) return {};
  Parsed p = parse(query);
  auto visible = [&](std::size_t i) {
    const ExposedTool& t = s.tools[i];
    if (!t.in_mode[mode] || (permitted && !(*permitted)[i])) return false;
    return p.servers.empty() ||
           std::find(p.servers.begin(), p.servers.end(), t.origin->name()) != p.servers.end();
  };
  std::vector<search::Hit> hits;
  // An exact name is what the client asks for, whatever the ranking says.
  std::optional<std::size_t> exact;
  if (auto it = s.tool_index.find(std::string(trimmed(query))); it != s.tool_index.end() && visible(it->second)) {
    exact = it->second;
    hits.push_back({it->second, 0.0});
  }
  if (p.words.empty() && !exact) {
    for (std::size_t i = 0; i < s.tools.size() && hits.size() < limit; ++i)
      if (visible(i)) hits.push_back({i, 0.0});
    return hits;
  }
  if (!s.index) return hits;
  for (const auto& h : s.index->search(p.words, limit, visible)) {
    if (exact && h.doc == *exact) hits.front().score = h.score;
    else if (hits.size() < limit) hits.push_back(h);
  }
  return hits;
}

bool meaningful_query(const Snapshot& s, std::string_view query) {
  Parsed p = parse(query);
  if (!p.servers.empty() || s.tool_index.count(std::string(trimmed(query)))) return true;
  return s.index && s.index->understands(p.words);
}

std::vector<std::pair<std::string, std::size_t>> tools_by_origin(const Snapshot& s, std::size_t mode,
                                                                 const std::vector<bool>* permitted) {
  std::vector<std::pair<std::string, std::size_t>> out;
  if (mode >= s.mode_tools.size()) return out;
  for (std::size_t i : s.mode_tools[mode]) {
    if (permitted && !(*permitted)[i]) continue;
    const std::string& origin = s.tools[i].origin->name();
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == origin; });
    if (it == out.end()) out.emplace_back(origin, 1);
    else ++it->second;
  }
  return out;
}

}  // namespace mcpgw::catalog
