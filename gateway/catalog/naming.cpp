#include "catalog/naming.hpp"

namespace mcpgw::catalog {

std::string exposed_name(const config::Naming& n, std::string_view server, std::string_view tool, bool prefix) {
  if (!prefix) return std::string(tool);
  std::string out;
  out.reserve(server.size() + n.separator.size() + tool.size());
  out.append(server).append(n.separator).append(tool);
  return out;
}

std::string exposed_description(const config::Naming& n, std::string_view server,
                                std::string_view description) {
  std::string prefix;
  std::string_view p = n.description_prefix;
  for (std::size_t i = 0; i < p.size();) {
    if (p.compare(i, 8, "{server}") == 0) {
      prefix.append(server);
      i += 8;
    } else {
      prefix.push_back(p[i++]);
    }
  }
  if (description.empty()) {
    while (!prefix.empty() && prefix.back() == ' ') prefix.pop_back();
    return prefix;
  }
  return prefix.append(description);
}

}  // namespace mcpgw::catalog
