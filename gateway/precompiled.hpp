#pragma once
// The third-party headers most of the gateway's sources include, parsed
// once per module when the build precompiles them (-DMCPGW_PCH=ON). Only
// headers whose meaning no source changes with a macro of its own.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
// spdlog only where the module links its compiled library (transport and the
// modules above it): below, no source logs, and spdlog's header-only mode
// would compile all of spdlog and fmt into every object of the module.
#ifdef SPDLOG_COMPILED_LIB
#include <spdlog/spdlog.h>
#endif

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>
