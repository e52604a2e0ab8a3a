#include "catalog/filter.hpp"

#include <algorithm>

#include "catalog/naming.hpp"

namespace mcpgw::catalog {

std::vector<std::string> slices_of(const config::Server* server, std::string_view upstream_name,
                                   const json::Value& tool) {
  std::vector<std::string> out;
  if (server) {
    for (const auto& [slice, globs] : server->slices)
      if (std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return glob_match(g, upstream_name); }))
        out.push_back(slice);
    if (!out.empty()) return out;
  }
  if (const auto* meta = json::find(tool, "_meta")) {
    if (const auto* s = json::find(*meta, "slices"); s && s->IsArray()) {
      for (const auto& v : s->GetArray())
        if (v.IsString() && v.GetStringLength() > 0) out.emplace_back(v.GetString(), v.GetStringLength());
      if (!out.empty()) return out;
    }
  }
  if (const auto* ann = json::find(tool, "annotations")) {
    const auto* ro = json::find(*ann, "readOnlyHint");
    if (ro && ro->IsTrue()) return {"read"};
    const auto* de = json::find(*ann, "destructiveHint");
    if (de && de->IsTrue()) return {"delete"};
  }
  return {"other"};
}

bool passes(const config::Filters& f, std::string_view exposed, std::string_view upstream,
            const std::vector<std::string>& slices) {
  auto name_matches = [&](const std::vector<std::string>& globs) {
    return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) {
      return glob_match(g, exposed) || (!upstream.empty() && glob_match(g, upstream));
    });
  };
  auto has_slice = [&](const std::vector<std::string>& list) {
    return std::any_of(slices.begin(), slices.end(),
                       [&](const std::string& s) { return std::find(list.begin(), list.end(), s) != list.end(); });
  };
  if (name_matches(f.exclude_tools)) return false;
  if (!f.include_tools.empty()) return name_matches(f.include_tools);
  if (has_slice(f.exclude_slices)) return false;
  if (!f.include_slices.empty()) return has_slice(f.include_slices);
  return true;
}

}  // namespace mcpgw::catalog
