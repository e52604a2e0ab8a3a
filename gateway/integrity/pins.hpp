#pragma once
// Pinned tool definitions: what was accepted for each server's tools, what
// is listed now when it differs, and the judgement of a listed definition
// against them (pure: the store and the catalog are elsewhere).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "integrity/hidden.hpp"
#include "jsonrpc/json.hpp"
#include "util/result.hpp"

namespace mcpgw::integrity {

/// `integrity.pins`.
enum class Mode { Off, Warn, Block };

/// A tool's state against its pin (`mcpgw pins list`).
enum class State { Pinned, Changed, New };
std::string_view name_of(State s);

/// One definition of a tool, as pinned or as seen.
struct Version {
  std::string digest;      ///< digest(definition)
  std::string definition;  ///< canonical(), JSON
  std::int64_t at_ms = 0;  ///< when it was pinned or first seen (Unix ms)
  std::string how;         ///< a pin's origin: "first sight" or "approved"
  bool operator==(const Version&) const = default;
};

/// What is known of one tool of one server.
struct Record {
  std::optional<Version> pin;   ///< the accepted definition
  std::optional<Version> seen;  ///< the listed one, when it is not the pin
  std::vector<std::string> changes;   ///< what `seen` changed (diff()), or "new tool"
  std::vector<std::string> findings;  ///< `seen`'s hidden instructions (describe())
  State state() const { return !pin ? State::New : seen ? State::Changed : State::Pinned; }
  bool operator==(const Record&) const = default;
};

Record record_from_json(const json::Value& v);
/// The record as a JSON object, into `a`.
json::Value record_to_json(const Record& r, json::Allocator& a);

/// Every record, by server and tool (exposed name).
struct Ledger {
  std::map<std::string, std::map<std::string, Record>> servers;
  const Record* find(const std::string& server, const std::string& tool) const;
  /// Some tool of `server` is pinned.
  bool pinned(const std::string& server) const;
};

/// A ledger as the store file holds it.
std::string write_ledger(const Ledger& l);
/// The store file's text; an error saying what is wrong with it.
Result<Ledger> parse_ledger(std::string_view text);

/// One record to write (a changed one).
struct Change {
  std::string server, tool;
  Record record;
};

/// Applies `changes` to `l`.
void apply_changes(Ledger& l, const std::vector<Change>& changes);

/// Which records an approval takes (`mcpgw pins approve`).
struct Selection {
  std::vector<std::string> names;  ///< exposed tool names
  std::string server;              ///< every tool of this server
  bool all = false;
};

/// The changes that make the listed definitions of `sel` the pins (now
/// `now_ms`); an error naming a tool or server the ledger does not have.
Result<std::vector<Change>> approve(const Ledger& l, const Selection& sel, std::int64_t now_ms);

/// The judgement of one listed tool.
struct ToolReport {
  std::string server, tool;
  State state = State::Pinned;
  bool withheld = false;  ///< under block: not listed, its calls refused
  std::vector<std::string> changes;
  std::vector<Finding> findings;
  std::string digest;
  /// The text a client gets when calling it while withheld.
  std::string refusal() const;
};

/// Judges listed definitions against a ledger, pinning on first sight:
/// the first time a server's tools are seen (no pin of that server yet)
/// each clean one is pinned; after that a definition that is not its pin
/// is changed (or new), and one with hidden instructions is flagged as
/// such even on first sight. Collects the records to write.
class Judge {
 public:
  /// `ledger` null: the pins are not loaded (yet), `why`; every tool is
  /// then new (withheld under block), nothing is written. `provisional`:
  /// some server has not listed its tools yet (its names are not in
  /// `owners`), so a first sight is served but not pinned until it has.
  Judge(Mode mode, std::shared_ptr<const Ledger> ledger, std::string why, std::int64_t now_ms, const Scanner& scanner,
        const ToolOwners& owners, bool provisional = false);

  /// The judgement of tool `tool` of `server` whose exposed definition is `def`.
  ToolReport judge(const std::string& server, const std::string& tool, const json::Value& def);
  /// The records to write.
  std::vector<Change> take_changes() { return std::move(changes_); }

 private:
  Mode mode_;
  std::shared_ptr<const Ledger> ledger_;
  std::string why_;
  std::int64_t now_;
  const Scanner& scanner_;
  const ToolOwners& owners_;
  bool provisional_;
  std::vector<Change> changes_;
};

}  // namespace mcpgw::integrity
