#pragma once
// The heads of the HTTP/1.1 messages of every call, written as text: the
// request to an upstream and the response to a client. Beast's fields
// allocate a node per header and its serializer cost more per call than
// the rest of the exchange; these heads are a handful of known headers,
// written once and sent with the body in one write.
#include <optional>
#include <string>

#include "transport/http_client.hpp"
#include "transport/http_listener.hpp"

namespace mcpgw::transport {

/// The request line, `Host` (the URL's), `User-Agent`, `req.headers` (a
/// header named again replaces the earlier one, as Beast's set() did;
/// `Content-Length`, `Transfer-Encoding` and `Connection` are the
/// exchange's own and are skipped), `Content-Length` when there is a body
/// or the method carries one, and the blank line. Nullopt when a name or a
/// value would break the head (empty name, CR, LF or NUL), so nothing is
/// sent.
std::optional<std::string> request_head(const Url& url, const HttpRequest& req);

/// The status line of response `r`, its headers (a name again replaces the
/// earlier one; `Content-Length`, `Transfer-Encoding` and `Connection` are
/// skipped), `Content-Length` (none for 1xx, 204 and 304), `Connection:
/// close` unless `keep_alive`, and the blank line: what Beast's serializer
/// wrote after prepare_payload(). Nullopt when a name or a value would
/// break the head.
std::optional<std::string> response_head(const http::Response& r, bool keep_alive);

}  // namespace mcpgw::transport
