#include "server/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>

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

/// The gateway's log sink: stderr, with what the detectors in force find
/// masked in each message first (redact_logs). Lines carry relayed text (an
/// upstream's error, a tool name, a client's header), so they are masked
/// whatever redact.in says.
class RedactingSink final : public spdlog::sinks::sink {
 public:
  void log(const spdlog::details::log_msg& msg) override {
    auto detectors = detectors_.load(std::memory_order_acquire);
    std::string masked;
    redact::Tally tally;
    if (!detectors || !detectors->mask(std::string_view(msg.payload.data(), msg.payload.size()), masked, tally))
      return inner_.log(msg);
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(masked.data(), masked.size());
    inner_.log(copy);
  }
  void flush() override { inner_.flush(); }
  void set_pattern(const std::string& pattern) override { inner_.set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_.set_formatter(std::move(formatter));
  }
  void set_detectors(std::shared_ptr<const redact::Redactor> d) { detectors_.store(std::move(d), std::memory_order_release); }

 private:
  spdlog::sinks::stderr_sink_mt inner_;
  std::atomic<std::shared_ptr<const redact::Redactor>> detectors_;
};

}  // namespace

void redact_logs(std::shared_ptr<const redact::Redactor> detectors) {
  for (const auto& sink : spdlog::default_logger()->sinks())
    if (auto* ours = dynamic_cast<RedactingSink*>(sink.get())) ours->set_detectors(detectors);
}

Result<void> setup_logging(const std::string& level, const std::string& format) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    return Error{"invalid --log-level \"" + level + "\" (trace, debug, info, warn, error)"};
  auto logger = std::make_shared<spdlog::logger>("mcpgw", std::make_shared<RedactingSink>());
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
