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
  /// Which detectors match a text at all (detects(), and the relabelling
  /// of a generic match).
  re2::RE2::Set set;
  /// Each detector alone: where `all` cannot be compiled.
  std::vector<std::unique_ptr<re2::RE2>> detectors;
  std::vector<bool> generic;
  /// Every detector as one alternation, `(d0)|(d1)|...`, in priority
  /// order: one leftmost-first pass over a text finds every secret, where
  /// the set and then each matching detector would read it once more per
  /// detector that matched. Null when RE2 refuses the union (two patterns
  /// naming a group alike).
  std::unique_ptr<re2::RE2> all;
  std::vector<int> outer;       ///< detector -> its group in `all`
  std::vector<bool> has_inner;  ///< whether it has a group of its own (masked instead)
  int groups = 0;               ///< groups of `all`

  explicit Impl(const re2::RE2::Options& o) : set(o, re2::RE2::UNANCHORED) {}

  /// The spans of `text` to mask, by one pass of `all`.
  void spans_of(std::string_view text, std::vector<Span>& spans) const;
  /// The same, by each detector the set says matches.
  void spans_each(std::string_view text, const std::vector<int>& hit, std::vector<Span>& spans) const;
};

void Redactor::Impl::spans_of(std::string_view text, std::vector<Span>& spans) const {
  thread_local std::vector<re2::StringPiece> found;
  found.assign(static_cast<std::size_t>(groups) + 1, re2::StringPiece());
  thread_local std::vector<int> specific;
  std::size_t pos = 0;
  while (pos <= text.size() && all->Match(text, pos, text.size(), re2::RE2::UNANCHORED, found.data(), groups + 1)) {
    std::size_t d = 0;
    while (d < outer.size() && !found[static_cast<std::size_t>(outer[d])].data()) ++d;
    const re2::StringPiece& whole = found[0];
    std::size_t end = static_cast<std::size_t>(whole.data() - text.data()) + whole.size();
    pos = end > pos ? end : pos + 1;
    if (d == outer.size()) continue;
    const re2::StringPiece& inner = found[static_cast<std::size_t>(outer[d]) + 1];
    const re2::StringPiece& masked = has_inner[d] && inner.data() ? inner : found[static_cast<std::size_t>(outer[d])];
    if (masked.empty()) continue;
    // A generic match (password=...) whose value is itself a token a
    // specific detector knows is named by that one.
    if (generic[d] && set.Match(masked, &specific)) {
      for (int k : specific)
        if (!generic[static_cast<std::size_t>(k)]) d = std::min(d, static_cast<std::size_t>(k));
    }
    std::size_t begin = static_cast<std::size_t>(masked.data() - text.data());
    spans.push_back({begin, begin + masked.size(), d});
  }
}

void Redactor::Impl::spans_each(std::string_view text, const std::vector<int>& hit, std::vector<Span>& spans) const {
  re2::StringPiece found[2];
  for (int d : hit) {
    const re2::RE2& re = *detectors[static_cast<std::size_t>(d)];
    const int n = re.NumberOfCapturingGroups() > 0 ? 2 : 1;
    std::size_t pos = 0;
    while (pos <= text.size() && re.Match(text, pos, text.size(), re2::RE2::UNANCHORED, found, n)) {
      const re2::StringPiece& whole = found[0];
      // A pattern with a group masks what the group matched, if it took part.
      const re2::StringPiece& masked = n == 2 && found[1].data() ? found[1] : whole;
      std::size_t begin = static_cast<std::size_t>(masked.data() - text.data());
      if (!masked.empty()) spans.push_back({begin, begin + masked.size(), static_cast<std::size_t>(d)});
      std::size_t end = static_cast<std::size_t>(whole.data() - text.data()) + whole.size();
      pos = end > pos ? end : pos + 1;
    }
  }
}

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
    // A pattern that matches nothing at all would count without masking.
    if (re2::RE2::FullMatch("", *re))
      return SetupError{Kind::BadRegex, e.index, "matches the empty string (it must match the secret itself)"};
    r->impl_->detectors.push_back(std::move(re));
    r->impl_->generic.push_back(!e.pattern && find_builtin(e.name)->generic);
    r->names_.push_back(e.name);
    r->pattern_.push_back(e.pattern);
  }
  if (specific.empty()) return std::shared_ptr<const Redactor>(std::move(r));
  if (!r->impl_->set.Compile())
    return SetupError{Kind::TooLarge, 0, "the detectors together are too large to compile into one set"};
  std::string all;
  int group = 1;
  for (std::size_t i = 0; i < specific.size(); ++i) {
    all.append(i ? "|(" : "(").append(specific[i].regex).push_back(')');
    const int own = r->impl_->detectors[i]->NumberOfCapturingGroups();
    r->impl_->outer.push_back(group);
    r->impl_->has_inner.push_back(own > 0);
    group += 1 + own;
  }
  auto one = std::make_unique<re2::RE2>(all, set_options);
  if (one->ok() && one->NumberOfCapturingGroups() == group - 1) {
    r->impl_->groups = group - 1;
    r->impl_->all = std::move(one);
  }
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
  if (names_.empty()) return false;
  thread_local std::vector<Span> spans;
  spans.clear();
  if (impl_->all) {
    impl_->spans_of(text, spans);
  } else {
    thread_local std::vector<int> hit;
    matching(text, hit);
    impl_->spans_each(text, hit, spans);
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
