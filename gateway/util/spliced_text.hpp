#pragma once
// A message's text as the gateway's own bytes around one shared part.
#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace mcpgw {

/// Text made of a head and a tail the gateway wrote around a part it did
/// not: a relayed result of megabytes stays in the buffer it was read
/// into and is written from there (a gathered write), never copied into a
/// response of its own. Most texts are one string (the head); a value
/// type, cheap to move.
class SplicedText {
 public:
  SplicedText() = default;
  /// All of `whole`, the gateway's own.
  SplicedText(std::string whole) : head_(std::move(whole)) {}  // NOLINT: implicit, a string is the usual case
  SplicedText(const char* whole) : head_(whole) {}              // NOLINT: as above
  /// `head`, then `part` (which lies in what `owner` keeps alive), then `tail`.
  SplicedText(std::string head, std::shared_ptr<const void> owner, std::string_view part, std::string tail)
      : head_(std::move(head)), owner_(std::move(owner)), part_(part), tail_(std::move(tail)) {}

  std::size_t size() const { return head_.size() + part_.size() + tail_.size(); }
  bool empty() const { return size() == 0; }
  /// The text's pieces in order (the last two empty for a plain string).
  std::array<std::string_view, 3> pieces() const { return {head_, part_, tail_}; }
  /// Appends `more` to the text (after its tail; to the head of a plain
  /// string), the shared part staying where it is.
  void append(std::string_view more) { (part_.empty() && tail_.empty() ? head_ : tail_).append(more); }
  /// Appends the text to `out`.
  void append_to(std::string& out) const {
    out.reserve(out.size() + size());
    out.append(head_).append(part_).append(tail_);
  }
  /// The text as one string: free for a plain string, a copy of the
  /// shared part otherwise.
  std::string flatten() && {
    if (part_.empty() && tail_.empty()) return std::move(head_);
    std::string out;
    append_to(out);
    return out;
  }

 private:
  std::string head_;
  std::shared_ptr<const void> owner_;
  std::string_view part_;
  std::string tail_;
};

}  // namespace mcpgw
