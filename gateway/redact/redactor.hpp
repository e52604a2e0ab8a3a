#pragma once
// Secret detection and masking over text: the built-in detectors a
// configuration chose and the operator's patterns, compiled once into one
// RE2::Set. A text is read once by the set to learn which detectors match
// at all (most texts: none, and nothing more is done); only those then
// find their spans. Pure: no I/O, immutable once made, shared by threads.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace re2 {
class RE2;
}

namespace mcpgw::redact {

/// An operator's pattern (`redact.patterns[]`).
struct Pattern {
  std::string name;
  std::string regex;  ///< RE2 syntax
  bool operator==(const Pattern&) const = default;
};

/// Which detectors to compile.
struct Spec {
  bool all_builtins = true;              ///< every built-in detector; else `builtins`
  std::vector<std::string> builtins;     ///< names of built-in detectors
  std::vector<Pattern> patterns;
  bool operator==(const Spec&) const = default;
};

/// Why a Spec does not compile.
struct SetupError {
  enum class Kind { UnknownBuiltin, BadName, DuplicateName, BadRegex, TooLarge };
  Kind kind;
  /// The offending entry: an index into Spec::builtins (UnknownBuiltin) or
  /// Spec::patterns (the others; TooLarge: none, 0).
  std::size_t index = 0;
  std::string message;
};

/// How many spans each detector masked, by detector index.
class Tally {
 public:
  Tally() = default;
  explicit Tally(std::size_t detectors) : counts_(detectors, 0) {}
  void add(std::size_t detector, std::uint32_t n = 1) {
    if (detector >= counts_.size()) counts_.resize(detector + 1, 0);
    counts_[detector] += n;
    total_ += n;
  }
  /// Adds every count of `other` (a tally of the same redactor).
  void merge(const Tally& other);
  std::uint32_t total() const { return total_; }
  std::size_t size() const { return counts_.size(); }
  std::uint32_t operator[](std::size_t detector) const { return counts_[detector]; }

 private:
  std::vector<std::uint32_t> counts_;
  std::uint32_t total_ = 0;
};

/// The compiled detectors.
class Redactor {
 public:
  /// Compiles `spec`; the error names the entry at fault and, for an
  /// unknown built-in, every built-in name.
  static std::variant<std::shared_ptr<const Redactor>, SetupError> compile(const Spec& spec);
  ~Redactor();
  Redactor(const Redactor&) = delete;
  Redactor& operator=(const Redactor&) = delete;

  /// Detectors compiled (built-in ones first, the generic ones last).
  std::size_t size() const { return names_.size(); }
  const std::string& name(std::size_t detector) const { return names_[detector]; }
  /// Whether detector `detector` is an operator's pattern.
  bool is_pattern(std::size_t detector) const { return pattern_[detector]; }
  /// A tally sized for these detectors.
  Tally tally() const { return Tally(size()); }

  /// Writes `text` to `out` with every detected secret replaced by
  /// `[REDACTED:<name>]` and counts each in `tally`; returns false, leaving
  /// `out` alone, when nothing is detected.
  bool mask(std::string_view text, std::string& out, Tally& tally) const;
  /// Whether any detector matches `text`.
  bool detects(std::string_view text) const;

  /// `tally` as a JSON object, detector name to count, in detector order
  /// ({"github_token":2}); "" for an empty tally.
  std::string counts_json(const Tally& tally) const;
  /// The names of the detectors `tally` counts, comma-separated.
  std::string names_of(const Tally& tally) const;

 private:
  struct Impl;
  explicit Redactor(std::unique_ptr<Impl> impl);
  /// Which detectors match somewhere in `text`, ascending.
  void matching(std::string_view text, std::vector<int>& out) const;

  std::unique_ptr<Impl> impl_;
  std::vector<std::string> names_;
  std::vector<bool> pattern_;
};

}  // namespace mcpgw::redact
