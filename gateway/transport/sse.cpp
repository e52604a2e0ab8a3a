#include "transport/sse.hpp"

namespace mcpgw::transport::sse {

std::string format_event(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 24);
  out += "event: message\ndata: ";
  out += data;
  out += "\n\n";
  return out;
}

bool Parser::feed(std::string_view chunk) {
  buf_.append(chunk);
  std::size_t start = 0;
  for (;;) {
    std::size_t nl = buf_.find_first_of("\r\n", start);
    if (nl == std::string::npos) break;
    std::string_view l(buf_.data() + start, nl - start);
    std::size_t next = nl + 1;
    // CRLF counts as one line end; a lone CR at the end of the buffer may be
    // the first half of a CRLF still in flight, so wait for more.
    if (buf_[nl] == '\r') {
      if (next == buf_.size()) break;
      if (buf_[next] == '\n') ++next;
    }
    start = next;
    if (!line(l)) {
      buf_.erase(0, start);
      return false;
    }
  }
  buf_.erase(0, start);
  return true;
}

bool Parser::line(std::string_view l) {
  if (l.empty()) {
    bool ok = true;
    if (has_data_) ok = on_event_(event_.empty() ? "message" : event_, data_);
    event_.clear();
    data_.clear();
    has_data_ = false;
    return ok;
  }
  if (l.front() == ':') return true;
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
  } else if (field == "retry" && !value.empty() &&
             value.find_first_not_of("0123456789") == std::string_view::npos && value.size() < 9) {
    retry_ms_ = std::stoi(std::string(value));
  }
  return true;
}

}  // namespace mcpgw::transport::sse
