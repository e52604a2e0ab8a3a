// The reference, docs/configuration.md, against the loader's key table
// (config/keys.hpp): a key the loader accepts must have a row in one of the
// reference's key tables, and a row must name a key the loader accepts.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "config/keys.hpp"

namespace {

std::string trim(std::string s) {
  auto first = s.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(' ') - first + 1);
}

/// The cells of a Markdown table row (`| a | b |`).
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 1;
  for (std::size_t bar; (bar = line.find('|', start)) != std::string::npos; start = bar + 1)
    out.push_back(trim(line.substr(start, bar - start)));
  return out;
}

struct Reference {
  std::multiset<std::string> keys;     ///< first cells of the key tables' rows
  std::vector<std::string> malformed;  ///< rows whose first cell is not one `key`
};

/// The rows of every table whose header starts `| key | type | default | SIGHUP |`.
Reference read_reference(std::istream& in) {
  Reference ref;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("|", 0) != 0) {
      in_table = false;
      continue;
    }
    auto c = cells(line);
    if (c.size() >= 4 && c[0] == "key" && c[1] == "type" && c[2] == "default" && c[3] == "SIGHUP") {
      in_table = true;
      continue;
    }
    if (!in_table || line.rfind("|---", 0) == 0) continue;
    const std::string& key = c.empty() ? line : c[0];
    if (key.size() < 3 || key.front() != '`' || key.back() != '`' ||
        key.find('`', 1) != key.size() - 1) {
      ref.malformed.push_back(line);
      continue;
    }
    ref.keys.insert(key.substr(1, key.size() - 2));
  }
  return ref;
}

}  // namespace

TEST_CASE("config reference: docs/configuration.md lists every key the loader accepts, and only those") {
  std::ifstream file(MCPGW_SOURCE_DIR "/docs/configuration.md");
  REQUIRE_MESSAGE(file.good(), "cannot read " MCPGW_SOURCE_DIR "/docs/configuration.md");
  Reference ref = read_reference(file);
  for (const auto& row : ref.malformed) FAIL_CHECK("a key table row whose first cell is not one `key`: " << row);

  std::set<std::string> accepted;
  for (const auto& key : mcpgw::config::keys::all()) accepted.insert(key);
  for (const auto& key : accepted) {
    CHECK_MESSAGE(ref.keys.count(key) == 1,
                  "the loader accepts `" << key << "`: docs/configuration.md must have exactly one row for it (has "
                                         << ref.keys.count(key) << ")");
  }
  for (const auto& key : ref.keys) {
    CHECK_MESSAGE(accepted.count(key) == 1,
                  "docs/configuration.md documents `" << key << "`, which the loader does not accept");
  }
}
