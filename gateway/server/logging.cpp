#include "server/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "jsonrpc/json.hpp"

namespace mcpgw::server {
namespace {

/// %* in a pattern: the message as a quoted JSON string.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    std::string q = json::quote(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(q.data(), q.data() + q.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonMessageFlag>(); }
};

}  // namespace

Result<void> setup_logging(const std::string& level, const std::string& format) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    return Error{"invalid --log-level \"" + level + "\" (trace, debug, info, warn, error)"};
  auto logger = std::make_shared<spdlog::logger>("mcpgw", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (format == "json") {
    auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    f->add_flag<JsonMessageFlag>('*').set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","msg":%*})");
    logger->set_formatter(std::move(f));
  } else if (format == "text") {
    logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
  } else {
    return Error{"invalid --log-format \"" + format + "\" (text, json)"};
  }
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
  return {};
}

}  // namespace mcpgw::server
