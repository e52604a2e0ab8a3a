#pragma once
// Server-Sent Events framing (WHATWG "event stream" format), both ways.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "util/spliced_text.hpp"

namespace mcpgw::transport::sse {

/// A comment frame: keeps a stream alive and reveals a gone client.
inline constexpr std::string_view kHeartbeat = ": ping\n\n";

/// Frames one JSON-RPC message (which must be a single line) as an event.
std::string format_event(std::string_view data);
/// format_event() of a text in pieces.
std::string format_spliced_event(const SplicedText& data);

/// Incremental event-stream parser: feed bytes as they arrive, split
/// anywhere (even inside a CRLF); each byte is looked at once, so a stream
/// fed one byte at a time costs what it costs in one piece. Memory is
/// bounded by `max_event`: an event whose fields grow past it is skipped to
/// its end and reported to `on_oversized` instead of `on_event`.
class Parser {
 public:
  /// Gets (event type, data) of each complete event; false stops the parser.
  using Callback = std::function<bool(std::string_view event, std::string_view data)>;
  /// Gets the size seen of an event skipped for its size (at least
  /// `max_event` + 1); false stops the parser.
  using OversizedCallback = std::function<bool(std::size_t bytes)>;

  explicit Parser(Callback on_event, std::size_t max_event = 64 * 1024 * 1024,
                  OversizedCallback on_oversized = {})
      : on_event_(std::move(on_event)), on_oversized_(std::move(on_oversized)), max_(max_event) {}
  /// Consumes `chunk`; returns false as soon as a callback returns false
  /// (the rest of the chunk is not looked at).
  bool feed(std::string_view chunk);
  /// Forgets a partial line and event (a stream broke off mid-event and is
  /// resumed by a new one); the last event id and retry delay are kept.
  void restart();
  /// The last event id seen ("" if none): where a resumed stream continues.
  const std::string& last_event_id() const { return last_id_; }
  /// The reconnection delay the server asked for, in ms (-1 if none).
  int retry_ms() const { return retry_ms_; }

 private:
  void append(std::string_view part);
  bool end_line();
  bool dispatch();
  Callback on_event_;
  OversizedCallback on_oversized_;
  std::size_t max_;
  std::string line_, event_, data_, last_id_;
  int retry_ms_ = -1;
  bool has_data_ = false;
  /// The previous chunk ended in CR: a LF starting the next one belongs to it.
  bool after_cr_ = false;
  /// The event in progress outgrew max_: its bytes are counted, not kept.
  bool oversized_ = false;
  /// The line in progress is part of an oversized event (so not empty).
  bool line_dropped_ = false;
  std::size_t event_bytes_ = 0;
};

}  // namespace mcpgw::transport::sse
