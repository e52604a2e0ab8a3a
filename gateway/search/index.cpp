#include "search/index.hpp"

#include <algorithm>
#include <iterator>
#include <cmath>

namespace mcpgw::search {
namespace {

// Field weights: a word of the name says more about a tool than the same
// word in a parameter's description.
constexpr float kNameWeight = 3.0f, kTitleWeight = 2.0f, kDescriptionWeight = 1.0f, kParameterWeight = 0.5f;
// The usual BM25 constants.
constexpr double kK1 = 1.2, kB = 0.75;
constexpr double kPrefixWeight = 0.5;
constexpr std::size_t kMaxPrefixTerms = 16;

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) { return is_upper(c) || is_lower(c) || is_digit(c) || static_cast<unsigned char>(c) >= 0x80; }
bool is_vowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Words that say nothing about which tool is meant (user questions are full
// of them). Tool verbs such as get, list, set are kept.
constexpr std::string_view kStopWords[] = {
    "a",    "an",   "and",  "any",  "are",  "as",    "at",   "be",    "by",   "can",  "could", "do",
    "does", "for",  "from", "have", "how",  "i",     "if",   "in",    "into", "is",   "it",    "its",
    "me",   "my",   "of",   "on",   "or",   "our",   "please", "so",  "some", "that", "the",   "their",
    "this", "to",   "we",   "what", "when", "which", "with", "would", "you",  "your"};

bool is_stop_word(std::string_view w) {
  return std::find(std::begin(kStopWords), std::end(kStopWords), w) != std::end(kStopWords);
}

/// Drops a doubled final consonant left by -ing/-ed ("transferr" -> "transfer").
void undouble(std::string& s) {
  std::size_t n = s.size();
  if (n > 3 && s[n - 1] == s[n - 2] && !is_vowel(s[n - 1]) && s[n - 1] != 'l' && s[n - 1] != 's' && s[n - 1] != 'z')
    s.pop_back();
}

void stem_in_place(std::string& s) {
  if (s.size() <= 3) return;
  if (ends_with(s, "ies") && s.size() > 4) {
    s.resize(s.size() - 3);
    s += 'y';
  } else if (ends_with(s, "sses")) {
    s.resize(s.size() - 2);
  } else if (ends_with(s, "s") && !ends_with(s, "ss") && !ends_with(s, "us") && !ends_with(s, "is")) {
    s.pop_back();
  }
  if (ends_with(s, "ing") && s.size() >= 6) {
    s.resize(s.size() - 3);
    undouble(s);
  } else if (ends_with(s, "ed") && s.size() >= 5) {
    s.resize(s.size() - 2);
    undouble(s);
  }
  if (ends_with(s, "e") && s.size() >= 4) s.pop_back();
}

/// Calls `sink` with each term of `text`, in order (see tokenize()). The
/// term is a buffer reused for the next one: a sink copies what it keeps.
template <typename Sink>
void each_term(std::string_view text, Sink&& sink) {
  std::string word;
  std::size_t i = 0, n = text.size();
  while (i < n) {
    while (i < n && !is_word(text[i])) ++i;
    std::size_t start = i;
    while (i < n && is_word(text[i])) {
      // A hump ends before an upper-case letter that follows a lower-case
      // one or a digit ("getBalance"), or that starts a new word after an
      // acronym ("HTTPServer": the S).
      if (i > start && is_upper(text[i]) &&
          (is_lower(text[i - 1]) || is_digit(text[i - 1]) || (i + 1 < n && is_lower(text[i + 1]) && is_upper(text[i - 1]))))
        break;
      ++i;
    }
    if (i == start) continue;
    word.assign(text.substr(start, i - start));
    for (char& c : word)
      if (is_upper(c)) c = static_cast<char>(c - 'A' + 'a');
    if (is_stop_word(word)) continue;
    stem_in_place(word);
    sink(static_cast<const std::string&>(word));
  }
}

}  // namespace

std::string stem(std::string_view word) {
  std::string s(word);
  stem_in_place(s);
  return s;
}

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> out;
  each_term(text, [&](const std::string& term) { out.push_back(term); });
  return out;
}

Index::Index(const std::vector<Document>& docs) {
  lengths_.reserve(docs.size());
  std::vector<std::pair<std::uint32_t, float>> terms;  // of one document
  double total = 0;
  for (std::size_t d = 0; d < docs.size(); ++d) {
    terms.clear();
    float length = 0;
    auto field = [&](const std::string& text, float weight) {
      each_term(text, [&](const std::string& term) {
        auto it = term_ids_.find(term);
        if (it == term_ids_.end()) {
          it = term_ids_.emplace(term, static_cast<std::uint32_t>(terms_.size())).first;
          terms_.push_back(term);
          postings_.emplace_back();
        }
        terms.emplace_back(it->second, weight);
        length += weight;
      });
    };
    field(docs[d].name, kNameWeight);
    field(docs[d].title, kTitleWeight);
    field(docs[d].description, kDescriptionWeight);
    field(docs[d].parameters, kParameterWeight);
    std::sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < terms.size();) {
      float tf = 0;
      std::size_t j = i;
      for (; j < terms.size() && terms[j].first == terms[i].first; ++j) tf += terms[j].second;
      postings_[terms[i].first].push_back({static_cast<std::uint32_t>(d), tf});
      i = j;
    }
    lengths_.push_back(length);
    total += length;
  }
  average_length_ = docs.empty() ? 0 : total / static_cast<double>(docs.size());
  sorted_ids_.resize(terms_.size());
  for (std::uint32_t id = 0; id < sorted_ids_.size(); ++id) sorted_ids_[id] = id;
  std::sort(sorted_ids_.begin(), sorted_ids_.end(), [&](std::uint32_t a, std::uint32_t b) { return terms_[a] < terms_[b]; });
}

std::vector<std::pair<std::uint32_t, double>> Index::expand(const std::string& term) const {
  if (auto it = term_ids_.find(term); it != term_ids_.end()) return {{it->second, 1.0}};
  std::vector<std::pair<std::uint32_t, double>> out;
  if (term.size() < 3) return out;
  auto it = std::lower_bound(sorted_ids_.begin(), sorted_ids_.end(), term,
                             [&](std::uint32_t id, const std::string& t) { return terms_[id] < t; });
  for (; it != sorted_ids_.end() && terms_[*it].compare(0, term.size(), term) == 0 && out.size() < kMaxPrefixTerms; ++it)
    out.emplace_back(*it, kPrefixWeight);
  return out;
}

bool Index::understands(std::string_view query) const {
  bool known = false;
  each_term(query, [&](const std::string& term) { known = known || !expand(term).empty(); });
  return known;
}

std::vector<Hit> Index::search(std::string_view query, std::size_t limit,
                               const std::function<bool(std::size_t)>& visible) const {
  std::vector<std::string> terms;
  each_term(query, [&](const std::string& term) {
    if (terms.size() < kMaxQueryTerms && std::find(terms.begin(), terms.end(), term) == terms.end())
      terms.push_back(term);
  });
  std::vector<double> scores(lengths_.size(), 0.0);
  std::vector<std::uint32_t> touched;
  const double n = static_cast<double>(lengths_.size());
  for (const auto& term : terms) {
    for (const auto& [id, weight] : expand(term)) {
      const auto& list = postings_[id];
      double df = static_cast<double>(list.size());
      double idf = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
      for (const Posting& p : list) {
        double norm = kK1 * (1.0 - kB + kB * lengths_[p.doc] / average_length_);
        if (scores[p.doc] == 0.0) touched.push_back(p.doc);
        scores[p.doc] += weight * idf * (p.tf * (kK1 + 1.0)) / (p.tf + norm);
      }
    }
  }
  std::vector<Hit> hits;
  for (std::uint32_t d : touched)
    if (scores[d] > 0.0 && visible(d)) hits.push_back({d, scores[d]});
  auto better = [](const Hit& a, const Hit& b) { return a.score != b.score ? a.score > b.score : a.doc < b.doc; };
  std::size_t keep = std::min(limit, hits.size());
  std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(keep), hits.end(), better);
  hits.resize(keep);
  return hits;
}

}  // namespace mcpgw::search
