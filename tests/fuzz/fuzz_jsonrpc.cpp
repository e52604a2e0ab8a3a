// libFuzzer target: the JSON-RPC layer every request body and every
// upstream line goes through (gateway/jsonrpc). An input is a body as a
// client or a server would send it.
// Besides sanitizer reports, a crash is any broken property: a body that
// yields neither a message nor an error; an error reply that is not a
// JSON-RPC error response; a batch member that neither parses nor errs;
// a message whose serialisation does not parse back to the same kind,
// method and id; replies built for a parsed request that are not valid.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.hpp"
#include "jsonrpc/message.hpp"

using namespace mcpgw;

namespace {

/// `text` is one JSON-RPC error response: {"jsonrpc":"2.0","id":…,"error":{"code":int,"message":string}}.
void check_error_response(const std::string& text) {
  auto doc = json::parse(text);
  MCPGW_FUZZ_CHECK(static_cast<bool>(doc), "an error reply that is not JSON");
  auto msg = jsonrpc::Message::from(std::move(*doc));
  MCPGW_FUZZ_CHECK(static_cast<bool>(msg), "an error reply that is not a JSON-RPC message");
  MCPGW_FUZZ_CHECK(msg->kind() == jsonrpc::Kind::ErrorResponse, "an error reply of another kind");
  const json::Value* code = json::find(*msg->error(), "code");
  MCPGW_FUZZ_CHECK(code && code->IsInt(), "an error reply without an integer code");
}

void check_message(const jsonrpc::Message& m) {
  std::string text = json::write(m.doc());
  auto doc = json::parse(text);
  MCPGW_FUZZ_CHECK(static_cast<bool>(doc), "a message that does not serialise to JSON");
  auto again = jsonrpc::Message::from(std::move(*doc));
  MCPGW_FUZZ_CHECK(static_cast<bool>(again), "a message that does not parse back");
  MCPGW_FUZZ_CHECK(again->kind() == m.kind(), "a message that parses back as another kind");
  MCPGW_FUZZ_CHECK(again->method() == m.method(), "a message that parses back with another method");
  MCPGW_FUZZ_CHECK(json::write(again->id()) == json::write(m.id()), "a message that parses back with another id");
  if (m.is_request()) {
    MCPGW_FUZZ_CHECK(jsonrpc::valid_id(m.id()), "a request accepted with an invalid id");
    // What the gateway answers a request with must itself be valid.
    check_error_response(jsonrpc::make_error(m.id(), jsonrpc::kMethodNotFound, m.method(), m.params()));
    const json::Value none;
    auto result = json::parse(jsonrpc::make_result(m.id(), m.params() ? *m.params() : none));
    MCPGW_FUZZ_CHECK(static_cast<bool>(result), "a result reply that is not JSON");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  jsonrpc::Parsed parsed = jsonrpc::parse(body);
  if (!parsed.batch) {
    MCPGW_FUZZ_CHECK(parsed.messages.size() + parsed.errors.size() == 1, "a single body that is not one outcome");
  } else {
    MCPGW_FUZZ_CHECK(!parsed.messages.empty() || !parsed.errors.empty(), "a batch with no outcome");
  }
  for (const std::string& e : parsed.errors) check_error_response(e);
  for (const jsonrpc::Message& m : parsed.messages) check_message(m);
  return 0;
}
