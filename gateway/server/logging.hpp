#pragma once
// Log set-up: everything goes to stderr (stdout may carry the protocol).
#include <memory>
#include <string>

#include "redact/redactor.hpp"
#include "util/result.hpp"

namespace mcpgw::server {

/// Configures the default logger. `level`: trace|debug|info|warn|error;
/// `format`: text|json (one JSON object per line).
Result<void> setup_logging(const std::string& level, const std::string& format);

/// Masks what `detectors` find in every log line from now on (redact:);
/// null: lines are written as they are. Applies to the logger
/// setup_logging made (no other is touched).
void redact_logs(std::shared_ptr<const redact::Redactor> detectors);

}  // namespace mcpgw::server
