#include "config/keys.hpp"

namespace mcpgw::config::keys {

std::vector<std::string> all() {
  std::vector<std::string> out;
  for (const Section& s : kSections) {
    for (std::string_view key : s.keys) out.push_back(s.path.empty() ? std::string(key) : std::string(s.path) + "." + std::string(key));
  }
  return out;
}

}  // namespace mcpgw::config::keys
