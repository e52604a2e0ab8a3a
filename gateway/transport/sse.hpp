#pragma once
// Server-Sent Events framing (WHATWG "event stream" format), both ways.
#include <functional>
#include <string>
#include <string_view>

namespace mcpgw::transport::sse {

/// A comment frame: keeps a stream alive and reveals a gone client.
inline constexpr std::string_view kHeartbeat = ": ping\n\n";

/// Frames one JSON-RPC message (which must be a single line) as an event.
std::string format_event(std::string_view data);

/// Incremental event-stream parser: feed bytes as they arrive; `on_event`
/// gets (event type, data) for each complete event.
class Parser {
 public:
  using Callback = std::function<bool(std::string_view event, std::string_view data)>;
  explicit Parser(Callback on_event) : on_event_(std::move(on_event)) {}
  /// Consumes `chunk`; returns false as soon as a callback returns false.
  bool feed(std::string_view chunk);
  /// The last event id seen ("" if none): where a resumed stream continues.
  const std::string& last_event_id() const { return last_id_; }
  /// The reconnection delay the server asked for, in ms (-1 if none).
  int retry_ms() const { return retry_ms_; }

 private:
  bool line(std::string_view l);
  Callback on_event_;
  std::string buf_, event_, data_, last_id_;
  int retry_ms_ = -1;
  bool has_data_ = false;
};

}  // namespace mcpgw::transport::sse
