#pragma once
// The gateway's one name for its coroutines, so a signature reads the same
// in every layer whichever Asio spelling it would otherwise use.
#include <boost/asio/awaitable.hpp>

namespace mcpgw {

/// A coroutine task returning T.
template <class T = void>
using Task = boost::asio::awaitable<T>;

}  // namespace mcpgw
