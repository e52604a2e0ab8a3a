#pragma once
// Reading a response without building it: the relay's scanner. A tool's
// answer is mostly content the gateway passes on untouched (text, images,
// files of megabytes); what it acts on is a handful of members. The scanner
// checks the whole message as strictly as the DOM parser and the writer
// would, finds those members, and leaves the bytes where they are, so the
// answer is relayed as it came (docs/architecture.md, "The relay").
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mcpgw::jsonrpc {

/// What the gateway acts on in a result object, found by the scan.
struct ResultFacts {
  bool is_error = false;     ///< the result's "isError" is true
  bool next_tool = false;    ///< its "_meta" has a "nextTool" (a chain to resolve)
  bool result_type = false;  ///< it has a "resultType" (an era's member: the DOM path stamps it)
  /// Some object in it has a "uri", "resourceUri" or "ui/resourceUri": a
  /// resource reference, which a prefixed server's results have rewritten.
  bool uri = false;
};

/// A success response as scanned: its id's text and its result object's,
/// both views into the scanned text.
struct ScannedResponse {
  std::string_view id;      ///< the id as written (a number or a string literal)
  std::string_view result;  ///< the result object, from `{` to `}`
  ResultFacts facts;
};

/// The deepest nesting the scanner follows; deeper messages take the DOM path.
inline constexpr int kMaxScanDepth = 256;

/// Scans `text`, one JSON-RPC message. Returns its parts when it is a
/// success response (`jsonrpc`, `id` and an object `result`, no other
/// member) whose bytes, relayed as they are, mean exactly what the DOM
/// path would write: nullopt for anything else, and for what that path
/// would change or refuse (malformed JSON, ill-formed UTF-8 or a lone
/// surrogate escape, which it repairs; a number that would not be finite;
/// a key written with escapes, which only a decoder can compare; nesting
/// past kMaxScanDepth), and a result with a line break between its tokens
/// (relayed, it would end the line or the SSE event it goes out in).
/// Nullopt is never an error: the DOM path reads it.
std::optional<ScannedResponse> scan_response(std::string_view text);

/// Scans `text`, one JSON-RPC message, for its `params.arguments` object
/// (a tool call's): its bytes, as a view into `text`, when the whole
/// message passes the checks scan_response() makes and the arguments, sent
/// upstream as they are, mean exactly what the DOM path would write;
/// nullopt otherwise (no arguments, or not an object, or twice; a line
/// break between their tokens), for the DOM path.
std::optional<std::string_view> scan_request_arguments(std::string_view text);

/// A response's result kept as the bytes it came in: the message's text,
/// shared (one copy of a large answer, whoever holds it) in whatever buffer
/// it was read into, and where the result lies in it.
struct RawResult {
  std::shared_ptr<const void> owner;  ///< keeps `text` alive
  std::string_view text;
  std::string_view result;  ///< within text
  ResultFacts facts;
};

}  // namespace mcpgw::jsonrpc
