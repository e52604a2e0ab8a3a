#pragma once
// Integrity's part of a catalog build (docs/operations.md, "Tool
// integrity"): the exposed definitions, once final, lose their invisible
// characters (integrity.strip_invisible) and are judged against the pins
// (integrity.pins); under block a tool that is not its pin is left out of
// the snapshot, so lists, search, calls, chains and tasks all miss it.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "integrity/pins.hpp"
#include "jsonrpc/json.hpp"
#include "upstream/upstream.hpp"

namespace mcpgw::catalog {

/// What a build is given to decide with.
struct IntegrityInput {
  integrity::Mode mode = integrity::Mode::Off;
  bool strip_invisible = false;
  /// The pins in force; null while they have not been read (`why`).
  std::shared_ptr<const integrity::Ledger> ledger;
  std::string why;
  std::int64_t now_ms = 0;
  /// The hidden-instruction rules (needed when mode is not Off).
  const integrity::Scanner* scanner = nullptr;
};

/// What a build decided: kept in its snapshot.
struct IntegrityView {
  integrity::Mode mode = integrity::Mode::Off;
  /// Every listed server tool that is not its pin (changed, new, flagged).
  std::vector<integrity::ToolReport> reports;
  /// Exposed name -> index in `reports` of the tools left out (block).
  std::unordered_map<std::string, std::size_t> withheld;
  /// "<server>\n<upstream name>" -> index in `reports` of the same (a
  /// chain's hop names its server's tool by the server's name of it).
  std::unordered_map<std::string, std::size_t> withheld_upstream;
  /// Records the build adds to the pins (first sight, changes seen).
  std::vector<integrity::Change> changes;
  /// The definitions whose invisible characters were removed ("tool
  /// fx:add: 3 removed"), for the log.
  std::vector<std::string> stripped;
  std::size_t pinned = 0;  ///< listed tools that are their pin
  /// The pins were not read (yet): every server tool was judged new.
  bool unread = false;
  /// The report of withheld tool `name` (exposed), or null.
  const integrity::ToolReport* withheld_tool(std::string_view name) const;
  /// The report of withheld tool `name` as server `server` knows it, or null.
  const integrity::ToolReport* withheld_tool(const std::string& server, std::string_view name) const;
};

/// The integrity decisions of one build.
class IntegrityPass {
 public:
  /// `upstreams`' listings give the other servers' tool names.
  IntegrityPass(const IntegrityInput& in, const config::Naming& naming,
                const std::vector<std::shared_ptr<upstream::Upstream>>& upstreams);

  /// Strips `def` (server `server`'s tool `name`, `uname` to the server,
  /// or a plugin's when `server` is empty) and judges it; false when it is
  /// withheld.
  bool admit(const std::string& server, const std::string& uname, const std::string& name, json::Value& def,
             json::Allocator& a);
  /// Strips an exposed string that is a key (a tool's or prompt's name).
  void strip_name(std::string& name) const;
  /// Strips a prompt's or resource's definition; `what` names it in the log.
  void strip_entry(json::Value& entry, json::Allocator& a, const std::string& what);
  IntegrityView take();

 private:
  const IntegrityInput& in_;
  integrity::ToolOwners owners_;
  std::unique_ptr<integrity::Judge> judge_;
  IntegrityView view_;
};

}  // namespace mcpgw::catalog
