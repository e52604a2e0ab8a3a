#include "transport/sse.hpp"

#include <charconv>

namespace mcpgw::transport::sse {

std::string format_event(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 24);
  out += "event: message\ndata: ";
  out += data;
  out += "\n\n";
  return out;
}

std::string format_spliced_event(const SplicedText& data) {
  std::string out;
  out.reserve(data.size() + 24);
  out += "event: message\ndata: ";
  data.append_to(out);
  out += "\n\n";
  return out;
}

bool Parser::feed(std::string_view chunk) {
  std::size_t i = 0;
  if (after_cr_ && !chunk.empty()) {
    after_cr_ = false;
    if (chunk.front() == '\n') i = 1;
  }
  while (i < chunk.size()) {
    std::size_t eol = chunk.find_first_of("\r\n", i);
    if (eol == std::string_view::npos) {
      append(chunk.substr(i));
      break;
    }
    append(chunk.substr(i, eol - i));
    i = eol + 1;
    if (chunk[eol] == '\r') {
      // CRLF is one line end, possibly split between two chunks.
      if (i == chunk.size()) after_cr_ = true;
      else if (chunk[i] == '\n') ++i;
    }
    if (!end_line()) return false;
  }
  return true;
}

void Parser::restart() {
  line_.clear();
  event_.clear();
  data_.clear();
  has_data_ = after_cr_ = oversized_ = line_dropped_ = false;
  event_bytes_ = 0;
}

void Parser::append(std::string_view part) {
  if (part.empty()) return;
  event_bytes_ += part.size();
  if (oversized_) {
    line_dropped_ = true;
    return;
  }
  line_.append(part);
  if (line_.size() + data_.size() + event_.size() <= max_) return;
  // Keeping it would let one event take any amount of memory.
  oversized_ = line_dropped_ = true;
  line_.clear();
  line_.shrink_to_fit();
  data_.clear();
  data_.shrink_to_fit();
}

bool Parser::end_line() {
  if (line_dropped_) {
    line_dropped_ = false;
    return true;
  }
  if (line_.empty()) {
    // An empty line, and never a dropped one: the event is complete.
    if (!oversized_) return dispatch();
    std::size_t bytes = event_bytes_;
    restart();
    return !on_oversized_ || on_oversized_(bytes);
  }
  ++event_bytes_;  // the line end
  std::string_view l(line_);
  if (l.front() != ':') {
    auto colon = l.find(':');
    std::string_view field = l.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view{} : l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "data") {
      if (has_data_) data_.push_back('\n');
      data_.append(value);
      has_data_ = true;
    } else if (field == "event") {
      event_.assign(value);
    } else if (field == "id" && value.find('\0') == std::string_view::npos) {
      last_id_.assign(value);
    } else if (field == "retry" && !value.empty() && value.size() < 9 &&
               value.find_first_not_of("0123456789") == std::string_view::npos) {
      std::from_chars(value.data(), value.data() + value.size(), retry_ms_);
    }
  }
  line_.clear();
  return true;
}

bool Parser::dispatch() {
  bool ok = true;
  if (has_data_) ok = on_event_(event_.empty() ? "message" : event_, data_);
  event_.clear();
  data_.clear();
  has_data_ = false;
  event_bytes_ = 0;
  return ok;
}

}  // namespace mcpgw::transport::sse
