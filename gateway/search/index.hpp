#pragma once
// Ranked full-text search over a fixed set of short documents (the tools of
// one catalog snapshot): a tokenizer made for identifiers and descriptions,
// and BM25 over weighted fields. Knows nothing of MCP or JSON.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mcpgw::search {

/// One searchable document, by field. Matches in the name count most, then
/// the title, the description and the parameters.
struct Document {
  std::string name;
  std::string title;
  std::string description;
  std::string parameters;  ///< parameter names and descriptions, space-separated
};

/// The terms of `text`: split on anything but ASCII letters, digits and
/// non-ASCII bytes, and between the humps of camelCase ("getHTTPStatus" is
/// get, http, status); lowercased, stemmed (stem()), common English words
/// left out.
std::vector<std::string> tokenize(std::string_view text);

/// `word` (lowercase) without the endings that vary between how a user asks
/// and how a tool is described: plurals, -ing, -ed, a final e ("balances",
/// "balance" -> "balanc"; "transferring", "transferred" -> "transfer").
std::string stem(std::string_view word);

/// One ranked document.
struct Hit {
  std::size_t doc;  ///< index into the documents the index was built from
  double score;
};

/// A BM25 index over documents, built once and then only read (safe to share
/// between threads).
class Index {
 public:
  Index() = default;
  explicit Index(const std::vector<Document>& docs);

  /// The best `limit` documents for `query` among those `visible` accepts,
  /// best first (ties in document order). Only the first kMaxQueryTerms
  /// distinct terms of the query count. A query term the index does not know
  /// (at least three characters) matches the known terms it begins, at half
  /// weight. Empty when nothing matches.
  std::vector<Hit> search(std::string_view query, std::size_t limit,
                          const std::function<bool(std::size_t)>& visible) const;

  /// Whether some term of `query` is known to the index (a query that is not
  /// only stop words and unknown words).
  bool understands(std::string_view query) const;

  std::size_t size() const { return lengths_.size(); }

  static constexpr std::size_t kMaxQueryTerms = 32;

 private:
  struct Posting {
    std::uint32_t doc;
    float tf;  ///< weighted by field
  };
  /// The postings lists a query term reaches, each with its weight.
  std::vector<std::pair<std::uint32_t, double>> expand(const std::string& term) const;

  std::unordered_map<std::string, std::uint32_t> term_ids_;
  std::vector<std::string> terms_;          ///< by id
  std::vector<std::uint32_t> sorted_ids_;   ///< ids in term order, for prefix matches
  std::vector<std::vector<Posting>> postings_;
  std::vector<float> lengths_;
  double average_length_ = 0;
};

}  // namespace mcpgw::search
