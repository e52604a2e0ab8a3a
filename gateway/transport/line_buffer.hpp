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

namespace mcpgw::transport {

/// Like LineBuffer, but a line over the limit does not end the stream: it is
/// skipped to its newline, and `on_oversized(head, tail, size)` gets its
/// first and last bytes (enough to find the JSON-RPC id, which serializers
/// put first or last) and its whole size instead.
class SkippingLineBuffer {
 public:
  /// Bytes kept of each end of a skipped line.
  static constexpr std::size_t kHead = 4096, kTail = 512;

  explicit SkippingLineBuffer(std::size_t max_line) : max_(max_line) {}

  template <typename OnLine, typename OnOversized>
  void feed(std::string_view data, OnLine&& on_line, OnOversized&& on_oversized) {
    while (!data.empty()) {
      std::size_t nl = data.find('\n');
      std::string_view part = data.substr(0, nl);
      data.remove_prefix(nl == std::string_view::npos ? data.size() : nl + 1);
      if (!skipping_ && buf_.size() + part.size() > max_) {
        // From here on the line is counted, not kept.
        skipping_ = true;
        skipped_ = buf_.size();
        tail_.assign(buf_.size() > kTail ? std::string_view(buf_).substr(buf_.size() - kTail) : std::string_view(buf_));
        buf_.resize(std::min(buf_.size(), kHead));
        buf_.shrink_to_fit();
      }
      if (skipping_) {
        skipped_ += part.size();
        if (buf_.size() < kHead) buf_.append(part.substr(0, kHead - buf_.size()));
        tail_.append(part.size() > kTail ? part.substr(part.size() - kTail) : part);
        if (tail_.size() > kTail) tail_.erase(0, tail_.size() - kTail);
      } else {
        buf_.append(part);
      }
      if (nl == std::string_view::npos) return;
      if (skipping_) {
        on_oversized(std::string_view(buf_), std::string_view(tail_), skipped_);
      } else {
        std::string_view line(buf_);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (!line.empty()) on_line(line);
      }
      buf_.clear();
      tail_.clear();
      skipped_ = 0;
      skipping_ = false;
    }
  }

 private:
  std::string buf_, tail_;
  std::size_t max_;
  bool skipping_ = false;  ///< the line in progress is over the limit
  std::size_t skipped_ = 0;  ///< its size so far
};

}  // namespace mcpgw::transport
