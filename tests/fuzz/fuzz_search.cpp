// libFuzzer target: the tool search tokenizer and BM25 index
// (gateway/search/index.*), which read every tool an upstream lists and
// every query a client sends. The first byte of an input is the limit of
// the search; the rest is split at its first 0x00 byte: before it, the
// documents (separated by 0x01, their fields by 0x02: name, title,
// description, parameters); after it, the query. Besides sanitizer reports,
// a crash is any broken property: a term that is empty, holds a separator
// or an upper-case ASCII letter; more hits than the limit, a hit out of
// range or not visible, twice the same document, scores not positive, finite
// and in descending order; a query that finds something the index says it
// does not understand.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.hpp"
#include "search/index.hpp"

using namespace mcpgw;

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    auto at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

void check_terms(std::string_view text) {
  for (const std::string& t : search::tokenize(text)) {
    MCPGW_FUZZ_CHECK(!t.empty(), "an empty term");
    for (char c : t) {
      MCPGW_FUZZ_CHECK(!(c >= 'A' && c <= 'Z'), "an upper-case letter in a term");
      MCPGW_FUZZ_CHECK(c != ' ' && c != '_' && c != ':' && c != '-' && c != '\0', "a separator in a term");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t limit = data[0] % 64;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto cut = rest.find('\0');
  std::string_view corpus = rest.substr(0, cut);
  std::string_view query = cut == std::string_view::npos ? std::string_view{} : rest.substr(cut + 1);

  std::vector<search::Document> docs;
  if (!corpus.empty())
    for (std::string_view d : split(corpus, '\x01')) {
      auto f = split(d, '\x02');
      f.resize(4);
      docs.push_back({std::string(f[0]), std::string(f[1]), std::string(f[2]), std::string(f[3])});
    }
  check_terms(corpus);
  check_terms(query);

  search::Index index(docs);
  MCPGW_FUZZ_CHECK(index.size() == docs.size(), "the index does not hold every document");
  auto visible = [](std::size_t d) { return d % 3 != 1; };
  for (bool all : {true, false}) {
    auto hits = index.search(query, limit, [&](std::size_t d) { return all || visible(d); });
    MCPGW_FUZZ_CHECK(hits.size() <= limit, "more hits than the limit");
    std::set<std::size_t> seen;
    for (std::size_t i = 0; i < hits.size(); ++i) {
      MCPGW_FUZZ_CHECK(hits[i].doc < docs.size(), "a hit out of range");
      MCPGW_FUZZ_CHECK(all || visible(hits[i].doc), "an invisible document found");
      MCPGW_FUZZ_CHECK(seen.insert(hits[i].doc).second, "a document found twice");
      MCPGW_FUZZ_CHECK(std::isfinite(hits[i].score) && hits[i].score > 0, "a score not positive and finite");
      MCPGW_FUZZ_CHECK(i == 0 || hits[i - 1].score >= hits[i].score, "hits not in score order");
    }
    if (all && !hits.empty()) MCPGW_FUZZ_CHECK(index.understands(query), "found by a query not understood");
  }
  return 0;
}
