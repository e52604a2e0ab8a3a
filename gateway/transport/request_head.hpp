#pragma once
// The head of an HTTP/1.1 request to an upstream, written as text. Beast's
// fields allocate a node per header and its serializer costs more per call
// than the rest of the exchange; an upstream request's head is a handful
// of known headers, written once and sent with the body in one write.
#include <optional>
#include <string>

#include "transport/http_client.hpp"

namespace mcpgw::transport {

/// The request line, `Host` (the URL's), `User-Agent`, `req.headers` (a
/// header named again replaces the earlier one, as Beast's set() did;
/// `Content-Length`, `Transfer-Encoding` and `Connection` are the
/// exchange's own and are skipped), `Content-Length` when there is a body
/// or the method carries one, and the blank line. Nullopt when a name or a
/// value would break the head (empty name, CR, LF or NUL), so nothing is
/// sent.
std::optional<std::string> request_head(const Url& url, const HttpRequest& req);

}  // namespace mcpgw::transport
