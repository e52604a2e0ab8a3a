#pragma once
// JSON-RPC 2.0 messages: classification, validation, construction.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "jsonrpc/id.hpp"
#include "jsonrpc/json.hpp"
#include "jsonrpc/scan.hpp"
#include "util/spliced_text.hpp"

namespace mcpgw::jsonrpc {

/// The standard error codes (JSON-RPC 2.0, section 5.1).
enum ErrorCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
};

/// What a single, structurally valid message is.
enum class Kind { Request, Notification, Response, ErrorResponse };

struct Parsed;
struct Unreadable;

/// A request's `params.arguments` as the bytes its sender wrote: the
/// message's text and where the arguments lie in it.
struct RawArguments {
  std::string text;
  std::string_view arguments;  ///< within text
};

/// One validated JSON-RPC message, owning its document.
class Message {
 public:
  /// The success response in `text` with its result left as the bytes it
  /// came in (raw()), when scan_response() accepts it with a numeric id
  /// (the gateway's own requests' ids); nullopt otherwise, for the DOM
  /// path. For the answers whose result the gateway mostly passes on.
  /// `text` lies in what `owner` keeps alive, and stays there.
  static std::optional<Message> relayed(std::shared_ptr<const void> owner, std::string_view text);
  /// Where relayed() copies a text: a buffer of at least the size asked.
  using Buffers = std::function<std::shared_ptr<char[]>(std::size_t)>;
  /// The same for a text that is copied (once) only when it is relayed:
  /// into a buffer `buffers` gives (a large one reused, whose pages are in
  /// place), or without it into a new one.
  static std::optional<Message> relayed(std::string_view text, const Buffers& buffers = {});

  /// Classifies `doc`; fails with a message suitable for an -32600 error.
  /// `source`, the text `doc` was parsed from, gives a numeric id its
  /// digits as written (without it, a number is kept as RapidJSON read it).
  static Result<Message> from(json::Document doc, std::string_view source = {});

  Kind kind() const { return kind_; }
  bool is_request() const { return kind_ == Kind::Request; }
  bool is_notification() const { return kind_ == Kind::Notification; }
  bool is_response() const { return kind_ == Kind::Response || kind_ == Kind::ErrorResponse; }

  /// Method name (requests and notifications), else empty.
  std::string_view method() const;
  /// The id (requests and responses) as its sender wrote it, else null.
  const Id& id() const { return id_; }
  /// `params`, or nullptr when absent.
  const json::Value* params() const { return json::find(doc_, "params"); }
  /// `result` of a success response, or nullptr (a relayed one is built
  /// now: what needs the value pays for it).
  const json::Value* result() const { return json::find(doc(), "result"); }
  /// The result as the bytes it came in, for a response made by relayed()
  /// whose result nothing has built yet; else null.
  const RawResult* raw() const { return raw_.get(); }
  /// `error` of an error response, or nullptr.
  const json::Value* error() const { return json::find(doc_, "error"); }
  /// A tool call's `params.arguments` as the bytes the client sent, when
  /// parse() kept them (scan_request_arguments accepted them); else null.
  /// They mean what `params()`'s arguments hold: code that changes those
  /// in place must not send these.
  const std::shared_ptr<const RawArguments>& raw_arguments() const { return raw_arguments_; }

  /// A copy with its own document (kind and id kept).
  Message clone() const { return Message(json::clone(doc()), kind_, id_); }

  json::Document& doc() {
    if (raw_) build();
    return doc_;
  }
  const json::Document& doc() const {
    if (raw_) build();
    return doc_;
  }

 private:
  Message(json::Document doc, Kind k, Id id) : doc_(std::move(doc)), kind_(k), id_(std::move(id)) {}
  static Result<Message> classify(json::Document doc, Id id);
  static std::optional<Message> relayed(std::shared_ptr<const void> owner, std::string_view text,
                                        const ScannedResponse& scanned);
  /// Parses the relayed text into the document (once; raw() is null after).
  void build() const;
  friend Parsed parse(std::string_view body, std::size_t max_batch);
  friend Parsed parse_keeping(std::string&& body, std::size_t max_batch);
  // Mutable: a relayed message is built on first use, behind const access.
  mutable json::Document doc_;
  Kind kind_;
  Id id_;
  mutable std::shared_ptr<const RawResult> raw_;
  std::shared_ptr<const RawArguments> raw_arguments_;
};

/// The outcome of parsing a request body: one message, a batch, or an error
/// response ready to send back (parse error or invalid request).
struct Parsed {
  std::vector<Message> messages;
  /// For a batch, the error responses of its invalid members, in order.
  std::vector<std::string> errors;
  bool batch = false;
  /// The size of a batch refused for being larger than asked (nothing of
  /// it was read: no messages, no errors); 0 otherwise.
  std::size_t oversized_batch = 0;
};

/// Parses one body (a message or a batch). A top-level parse failure or an
/// empty batch yields a single entry in `errors` and no messages; a batch
/// of more than `max_batch` messages (0: any number), `oversized_batch`.
Parsed parse(std::string_view body, std::size_t max_batch = 0);
/// The same, keeping the body of a single tool call (moved from `body`,
/// which is left empty then): its arguments stay the bytes they came in
/// too (Message::raw_arguments), to be sent on as they are.
Parsed parse_keeping(std::string&& body, std::size_t max_batch = 0);

/// A message a peer sent that cannot be used, read as far as it goes.
struct Unreadable {
  std::string why;                      ///< what is wrong with it, for a log line or an error
  std::optional<std::int64_t> answers;  ///< the request it answers, when it looks like a response
};

/// Reads one message (not a batch) a peer sent as `text`. A message that
/// is not JSON, or not a valid JSON-RPC message, is Unreadable; when its
/// top level has an integer "id" and no "method", it was meant as the
/// answer to that request (the waiting call can fail at once).
std::variant<Message, Unreadable> read(std::string_view text);

/// The id of the response whose text (or its beginning) is `text`, found
/// among its top-level keys without parsing it: nullopt when they show a
/// "method" (a request or notification) or no integer "id".
std::optional<std::int64_t> answer_id_in(std::string_view text);

/// Serialises `{"jsonrpc":"2.0","id":id,"result":result}`.
std::string make_result(const Id& id, const json::Value& result);
/// Like make_result, with `result_json` already serialised (hot paths build
/// large results as text).
std::string make_result_raw(const Id& id, std::string_view result_json);
/// The response to `id` around a relayed result, which stays where it was
/// read (the text keeps it alive) and is not copied.
SplicedText make_result_spliced(const Id& id, std::shared_ptr<const RawResult> raw);
/// An error response carrying `error` (an object {code, message, data?}) as is.
std::string make_error_response(const Id& id, const json::Value& error);
/// `{code, message}` of an error object as readable text: "error CODE: MESSAGE".
std::string describe_error(const json::Value& error);

/// Serialises an error response; `data` is optional.
std::string make_error(const Id& id, int code, std::string_view message,
                       const json::Value* data = nullptr);
/// Serialises a request with an integer id.
std::string make_request(std::int64_t id, std::string_view method, const json::Value* params);
/// The same with member "arguments" of the params the JSON text
/// `raw_arguments` (when not empty), written as it is after the others.
std::string make_request(std::int64_t id, std::string_view method, const json::Value* params,
                         std::string_view raw_arguments);
/// Serialises a notification.
std::string make_notification(std::string_view method, const json::Value* params);

/// True when a JSON-RPC id value is valid for a request (string or integer;
/// fractional numbers are tolerated as the spec allows numbers).
bool valid_id(const json::Value& id);

}  // namespace mcpgw::jsonrpc
