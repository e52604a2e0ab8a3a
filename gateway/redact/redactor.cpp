#include "redact/redactor.hpp"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>

#include "redact/detectors.hpp"

namespace mcpgw::redact {
namespace {

/// The DFA memory of the set (RE2's default is 8 MiB, shared by the forward
/// and reverse machines). A set of every built-in and a few dozen patterns
/// stays far below it; a set that does outgrow it is still correct (each
/// detector is then tried on its own), only slower.
constexpr std::int64_t kSetMemory = 64 << 20;

bool is_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return false;
  return true;
}

/// One masked stretch of a text.
struct Span {
  std::size_t begin, end, detector;
};

}  // namespace

struct Redactor::Impl {
  re2::RE2::Set set;
  std::vector<std::unique_ptr<re2::RE2>> detectors;

  explicit Impl(const re2::RE2::Options& o) : set(o, re2::RE2::UNANCHORED) {}
};

void Tally::merge(const Tally& other) {
  if (counts_.size() < other.counts_.size()) counts_.resize(other.counts_.size(), 0);
  for (std::size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
  total_ += other.total_;
}

Redactor::Redactor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Redactor::~Redactor() = default;

std::variant<std::shared_ptr<const Redactor>, SetupError> Redactor::compile(const Spec& spec) {
  using Kind = SetupError::Kind;
  // Detectors in priority order: where two overlap at one place, the first
  // names the mask.
  struct Entry {
    std::string name, regex;
    bool pattern;
    std::size_t index;  ///< into spec.patterns, for messages
  };
  std::vector<Entry> specific, generic;
  auto add_builtin = [&](const Builtin& b) {
    (b.generic ? generic : specific).push_back({std::string(b.name), std::string(b.regex), false, 0});
  };
  for (std::size_t i = 0; i < spec.builtins.size() && !spec.all_builtins; ++i)
    if (!find_builtin(spec.builtins[i]))
      return SetupError{Kind::UnknownBuiltin, i,
                        "unknown detector \"" + spec.builtins[i] + "\" (built-in: all, " + builtin_names() + ")"};
  // In the table's order whatever the order named (a name given twice counts once).
  for (const Builtin& b : builtins())
    if (spec.all_builtins || std::find(spec.builtins.begin(), spec.builtins.end(), b.name) != spec.builtins.end())
      add_builtin(b);
  for (std::size_t i = 0; i < spec.patterns.size(); ++i) {
    const Pattern& p = spec.patterns[i];
    if (!is_name(p.name))
      return SetupError{Kind::BadName, i, "expected a name of letters, digits, _ and - (at most 64), got \"" + p.name + "\""};
    if (find_builtin(p.name))
      return SetupError{Kind::DuplicateName, i, "\"" + p.name + "\" is the name of a built-in detector"};
    for (std::size_t j = 0; j < i; ++j)
      if (spec.patterns[j].name == p.name)
        return SetupError{Kind::DuplicateName, i, "\"" + p.name + "\" names patterns[" + std::to_string(j) + "] too"};
    if (auto why = regex_error(p.regex)) return SetupError{Kind::BadRegex, i, *why};
    specific.push_back({p.name, p.regex, true, i});
  }
  specific.insert(specific.end(), generic.begin(), generic.end());

  re2::RE2::Options options;
  options.set_log_errors(false);
  re2::RE2::Options set_options = options;
  set_options.set_max_mem(kSetMemory);
  auto impl = std::make_unique<Impl>(set_options);
  std::unique_ptr<Redactor> r(new Redactor(std::move(impl)));
  for (const Entry& e : specific) {
    std::string error;
    if (r->impl_->set.Add(e.regex, &error) < 0) return SetupError{Kind::BadRegex, e.index, error};
    auto re = std::make_unique<re2::RE2>(e.regex, options);
    if (!re->ok()) return SetupError{Kind::BadRegex, e.index, re->error()};
    r->impl_->detectors.push_back(std::move(re));
    r->names_.push_back(e.name);
    r->pattern_.push_back(e.pattern);
  }
  if (!specific.empty() && !r->impl_->set.Compile())
    return SetupError{Kind::TooLarge, 0, "the detectors together are too large to compile into one set"};
  return std::shared_ptr<const Redactor>(std::move(r));
}

void Redactor::matching(std::string_view text, std::vector<int>& out) const {
  out.clear();
  if (names_.empty()) return;
  re2::RE2::Set::ErrorInfo info{};
  if (impl_->set.Match(text, &out, &info)) {
    std::sort(out.begin(), out.end());
    return;
  }
  out.clear();
  if (info.kind == re2::RE2::Set::kNoError) return;
  // The set's DFA ran out of memory on this text: each detector on its own.
  for (std::size_t i = 0; i < impl_->detectors.size(); ++i)
    if (re2::RE2::PartialMatch(text, *impl_->detectors[i])) out.push_back(static_cast<int>(i));
}

bool Redactor::detects(std::string_view text) const {
  std::vector<int> hit;
  matching(text, hit);
  return !hit.empty();
}

bool Redactor::mask(std::string_view text, std::string& out, Tally& tally) const {
  thread_local std::vector<int> hit;
  matching(text, hit);
  if (hit.empty()) return false;
  std::vector<Span> spans;
  re2::StringPiece groups[2];
  for (int d : hit) {
    const re2::RE2& re = *impl_->detectors[static_cast<std::size_t>(d)];
    const int n = re.NumberOfCapturingGroups() > 0 ? 2 : 1;
    std::size_t pos = 0;
    while (pos <= text.size() && re.Match(text, pos, text.size(), re2::RE2::UNANCHORED, groups, n)) {
      const re2::StringPiece& whole = groups[0];
      // A pattern with a group masks what the group matched, if it took part.
      const re2::StringPiece& masked = n == 2 && groups[1].data() ? groups[1] : whole;
      std::size_t begin = static_cast<std::size_t>(masked.data() - text.data());
      if (!masked.empty()) spans.push_back({begin, begin + masked.size(), static_cast<std::size_t>(d)});
      std::size_t end = static_cast<std::size_t>(whole.data() - text.data()) + whole.size();
      pos = end > pos ? end : pos + 1;
    }
  }
  if (spans.empty()) return false;
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.detector < b.detector;
  });
  out.clear();
  out.reserve(text.size());
  std::size_t at = 0;
  for (std::size_t i = 0; i < spans.size();) {
    // Overlapping spans are one mask, named by the first.
    Span s = spans[i++];
    while (i < spans.size() && spans[i].begin < s.end) s.end = std::max(s.end, spans[i++].end);
    out.append(text.substr(at, s.begin - at)).append("[REDACTED:").append(names_[s.detector]).push_back(']');
    tally.add(s.detector);
    at = s.end;
  }
  out.append(text.substr(at));
  return true;
}

std::string Redactor::counts_json(const Tally& tally) const {
  std::string out;
  for (std::size_t i = 0; i < tally.size() && i < names_.size(); ++i) {
    if (!tally[i]) continue;
    // Names are [A-Za-z0-9_-]: nothing to escape.
    out.append(out.empty() ? "{\"" : ",\"").append(names_[i]).append("\":").append(std::to_string(tally[i]));
  }
  if (!out.empty()) out.push_back('}');
  return out;
}

std::string Redactor::names_of(const Tally& tally) const {
  std::string out;
  for (std::size_t i = 0; i < tally.size() && i < names_.size(); ++i)
    if (tally[i]) out.append(out.empty() ? "" : ", ").append(names_[i]);
  return out;
}

}  // namespace mcpgw::redact
