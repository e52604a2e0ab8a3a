#pragma once
// The one shape of the gateway's filter chains: an item passes a list of
// filters, each doing one concern around the rest of the chain through
// `Out Filter::on_call(Item&, ChainNext)`. The transport's admission of a
// request (`transport/http_request_filter.hpp`), an upstream's send and
// call filters (`upstream/send_filter.hpp`) and the server's admission and
// call filters (`server/call_filter.hpp`) are all chains of this one type.
// `Out` is a `Task<Answer>` for a chain that waits and a plain value for
// one that never does (the per-message limits).
#include <memory>
#include <span>
#include <vector>

namespace mcpgw {

/// The filters of a chain after the current one; calling it runs them.
template <class Filter, class Item, class Out>
class ChainNext {
 public:
  explicit ChainNext(std::span<Filter* const> rest) : rest_(rest) {}
  /// Runs the rest of the chain on `item`; a filter may call it more than
  /// once (a retry, a chain's hop) or not at all (an answer of its own).
  /// Not a coroutine: passing a filter on costs no coroutine frame of its
  /// own, only the next filter's.
  Out operator()(Item& item) const { return rest_.front()->on_call(item, ChainNext(rest_.subspan(1))); }

 private:
  std::span<Filter* const> rest_;
};

/// The filter objects of a chain, owned, and the order ChainNext runs them in.
template <class Filter>
struct Chain {
  std::vector<std::unique_ptr<Filter>> filters;
  /// `filters` as the span ChainNext takes.
  std::vector<Filter*> order;

  /// Appends `f` as the innermost filter so far.
  void add(std::unique_ptr<Filter> f) {
    order.push_back(f.get());
    filters.push_back(std::move(f));
  }
};

}  // namespace mcpgw
