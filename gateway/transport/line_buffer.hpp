#pragma once
// Splits a byte stream into newline-delimited JSON-RPC lines.
#include <algorithm>
#include <string>
#include <string_view>

namespace mcpgw::transport {

/// Collects bytes and hands out complete lines ("\n" or "\r\n" ended; empty
/// lines skipped). A partial line longer than `max_line` is an error: the
/// peer is not speaking newline-delimited messages, or is hostile.
class LineBuffer {
 public:
  explicit LineBuffer(std::size_t max_line) : max_(max_line) {}

  /// Appends `data`, calls `on_line(std::string_view)` for each complete
  /// line; false when the unfinished line outgrew the limit (it is dropped).
  template <typename F>
  bool feed(std::string_view data, F&& on_line) {
    // Only the new bytes can hold the next newline: the old ones had none.
    std::size_t scan_from = buf_.size();
    buf_.append(data);
    std::size_t start = 0, nl;
    while ((nl = buf_.find('\n', std::max(start, scan_from))) != std::string::npos) {
      std::string_view line(buf_.data() + start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (!line.empty()) on_line(line);
      start = nl + 1;
    }
    buf_.erase(0, start);
    if (buf_.size() <= max_) return true;
    buf_.clear();
    return false;
  }

 private:
  std::string buf_;
  std::size_t max_;
};

}  // namespace mcpgw::transport
