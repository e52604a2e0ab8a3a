// libFuzzer target: the JSON-RPC layer every request body and every
// upstream line goes through (gateway/jsonrpc). An input is a body as a
// client or a server would send it.
// Besides sanitizer reports, a crash is any broken property: a body that
// yields neither a message nor an error; an error reply that is not a
// JSON-RPC error response; a batch member that neither parses nor errs;
// a message whose serialisation does not parse back to the same kind and
// method; replies built for a parsed request that are not valid or carry
// another id than the one the body wrote (a number keeps its digits);
// anything written that is not well-formed UTF-8, whatever bytes came in.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.hpp"
#include "jsonrpc/message.hpp"
#include "util/utf8.hpp"

using namespace mcpgw;

namespace {

/// `text` is one JSON-RPC error response: {"jsonrpc":"2.0","id":…,"error":{"code":int,"message":string}},
/// whose id is `id` exactly.
void check_error_response(const std::string& text, const jsonrpc::Id& id) {
  MCPGW_FUZZ_CHECK(valid_utf8(text), "an error reply that is not well-formed UTF-8");
  auto doc = json::parse(text);
  MCPGW_FUZZ_CHECK(static_cast<bool>(doc), "an error reply that is not JSON");
  auto msg = jsonrpc::Message::from(std::move(*doc), text);
  MCPGW_FUZZ_CHECK(static_cast<bool>(msg), "an error reply that is not a JSON-RPC message");
  MCPGW_FUZZ_CHECK(msg->kind() == jsonrpc::Kind::ErrorResponse, "an error reply of another kind");
  const json::Value* code = json::find(*msg->error(), "code");
  MCPGW_FUZZ_CHECK(code && code->IsInt(), "an error reply without an integer code");
  MCPGW_FUZZ_CHECK(msg->id() == id, "an error reply under another id");
}

/// The id of a message of `body`: a number's text must be found there as
/// written (the reply then carries what the client sent, digit for digit).
void check_id_as_written(const jsonrpc::Id& id, std::string_view body) {
  if (id.is_null() || id.is_string()) return;
  MCPGW_FUZZ_CHECK(body.find(id.json()) != std::string_view::npos, "a numeric id other than the body wrote");
  std::string_view digits = id.json();
  MCPGW_FUZZ_CHECK(digits.find_first_not_of("0123456789+-.eE") == std::string_view::npos, "an id that is no number");
}

void check_message(const jsonrpc::Message& m, std::string_view body) {
  std::string text = json::write(m.doc());
  MCPGW_FUZZ_CHECK(valid_utf8(text), "a message written back in ill-formed UTF-8");
  auto doc = json::parse(text);
  MCPGW_FUZZ_CHECK(static_cast<bool>(doc), "a message that does not serialise to JSON");
  auto again = jsonrpc::Message::from(std::move(*doc), text);
  MCPGW_FUZZ_CHECK(static_cast<bool>(again), "a message that does not parse back");
  MCPGW_FUZZ_CHECK(again->kind() == m.kind(), "a message that parses back as another kind");
  MCPGW_FUZZ_CHECK(again->method() == m.method(), "a message that parses back with another method");
  check_id_as_written(m.id(), body);
  if (m.is_request()) {
    MCPGW_FUZZ_CHECK(!m.id().is_null(), "a request accepted without an id");
    // What the gateway answers a request with must itself be valid, under
    // the request's own id.
    check_error_response(jsonrpc::make_error(m.id(), jsonrpc::kMethodNotFound, m.method(), m.params()), m.id());
    const json::Value none;
    std::string reply = jsonrpc::make_result(m.id(), m.params() ? *m.params() : none);
    MCPGW_FUZZ_CHECK(valid_utf8(reply), "a result reply that is not well-formed UTF-8");
    jsonrpc::Parsed result = jsonrpc::parse(reply);
    MCPGW_FUZZ_CHECK(result.messages.size() == 1, "a result reply that is not one message");
    MCPGW_FUZZ_CHECK(result.messages[0].id() == m.id(), "a result reply under another id");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  // The repair behind every write: always well formed, and a no-op on what is.
  std::string repaired = repair_utf8(body);
  MCPGW_FUZZ_CHECK(valid_utf8(repaired), "a repair that left ill-formed UTF-8");
  MCPGW_FUZZ_CHECK(valid_utf8(body) == (repaired == body), "a repair that changed well-formed text, or kept ill-formed");
  jsonrpc::Parsed parsed = jsonrpc::parse(body);
  if (!parsed.batch) {
    MCPGW_FUZZ_CHECK(parsed.messages.size() + parsed.errors.size() == 1, "a single body that is not one outcome");
  } else {
    MCPGW_FUZZ_CHECK(!parsed.messages.empty() || !parsed.errors.empty(), "a batch with no outcome");
  }
  for (const std::string& e : parsed.errors) {
    jsonrpc::Parsed reply = jsonrpc::parse(e);
    MCPGW_FUZZ_CHECK(reply.messages.size() == 1, "an error reply that is not one message");
    check_id_as_written(reply.messages[0].id(), body);
    check_error_response(e, reply.messages[0].id());
  }
  for (const jsonrpc::Message& m : parsed.messages) check_message(m, body);
  // A batch size limit refuses a larger batch whole and changes nothing else.
  jsonrpc::Parsed bounded = jsonrpc::parse(body, 3);
  std::size_t entries = parsed.messages.size() + parsed.errors.size();
  if (parsed.batch && entries > 3) {
    MCPGW_FUZZ_CHECK(bounded.oversized_batch == entries && bounded.messages.empty() && bounded.errors.empty(),
                     "a batch over the limit not refused whole");
  } else {
    MCPGW_FUZZ_CHECK(bounded.oversized_batch == 0 && bounded.messages.size() == parsed.messages.size() &&
                         bounded.errors.size() == parsed.errors.size(),
                     "a body within the batch limit read differently");
  }
  return 0;
}
