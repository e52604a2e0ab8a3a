#pragma once
// The status page's data (`/status.json`, `/status/catalog.json`): what the
// gateway knows about its upstreams, catalog, sessions, calls and recent
// failures, gathered from the live objects and serialised for the page.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "catalog/catalog.hpp"
#include "config/config.hpp"
#include "plugin/plugin.hpp"
#include "server/audit.hpp"
#include "server/call_history.hpp"
#include "upstream/upstream.hpp"

namespace mcpgw::server {

/// Everything status_json() reports, read by the caller at one moment.
struct StatusInputs {
  std::shared_ptr<const config::Config> config;
  std::vector<std::shared_ptr<upstream::Upstream>> upstreams;
  std::vector<std::shared_ptr<plugin::Plugin>> plugins;
  std::vector<std::string> plugin_errors;
  std::shared_ptr<const catalog::Snapshot> snapshot;
  std::vector<std::pair<std::string, std::size_t>> principals;  ///< sessions per principal
  std::size_t suspended = 0;
  std::size_t open_streams = 0;
  std::vector<Audit::Notable> recent;
  std::vector<CallHistory::Series> series;
  std::int64_t started_unix_ms = 0;
  std::string pins_error;  ///< why the pins cannot be read; "" when they are
};

/// The page's live data: upstreams, plugins, modes, sessions, the call
/// series of the last 15 minutes and the recent refusals and failed calls.
/// At most `kPrincipalsShown` principals are listed by name (the rest are
/// summed), so 10,000 sessions stay a small document.
std::string status_json(const StatusInputs& in);
inline constexpr std::size_t kPrincipalsShown = 50;

/// Every tool of the snapshot with its origin, slices, modes and the start
/// of its description, for the page's catalog view (fetched again only when
/// the generation in status_json changes).
std::string catalog_json(const catalog::Snapshot& snap);

/// The page itself: HTML with its style and script inline, no outside
/// resource.
std::string_view status_html();

}  // namespace mcpgw::server
