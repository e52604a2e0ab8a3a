// libFuzzer target: the relay's scanner (gateway/jsonrpc/scan), against the
// DOM path it stands in for. An input is an upstream's answer as it would
// arrive. Besides sanitizer reports, a crash is any broken property, for
// any input the scanner accepts:
//  - the DOM parser accepts it too, as a success response with an object
//    result and a numeric id of the same digits;
//  - the relayed bytes are well-formed UTF-8 and parse to the same JSON as
//    the DOM path writes for the result;
//  - what the gateway acts on is never missed: the first isError as the
//    DOM reads it, a _meta.nextTool, a resultType, a resource reference
//    ("uri", "resourceUri", "ui/resourceUri") anywhere;
//  - Message::relayed() agrees, and builds on demand what read() builds.
// And as a client's request: the params.arguments scan_request_arguments()
// finds are the ones the DOM finds, and their bytes, well-formed UTF-8 on
// one line, parse to the same JSON as the DOM path writes for them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.hpp"
#include "jsonrpc/message.hpp"
#include "jsonrpc/scan.hpp"
#include "util/utf8.hpp"

using namespace mcpgw;

namespace {

bool has_key_anywhere(const json::Value& v, std::string_view key) {
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      if (std::string_view(m.name.GetString(), m.name.GetStringLength()) == key) return true;
      if (has_key_anywhere(m.value, key)) return true;
    }
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray())
      if (has_key_anywhere(e, key)) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto arguments = jsonrpc::scan_request_arguments(text)) {
    auto doc = json::parse(text);
    MCPGW_FUZZ_CHECK(static_cast<bool>(doc), "scanned arguments in a message the DOM parser refuses");
    const json::Value* params = doc->IsObject() ? json::find(*doc, "params") : nullptr;
    const json::Value* dom = params && params->IsObject() ? json::find(*params, "arguments") : nullptr;
    MCPGW_FUZZ_CHECK(dom && dom->IsObject(), "scanned arguments the DOM does not find");
    MCPGW_FUZZ_CHECK(valid_utf8(*arguments), "arguments' bytes in ill-formed UTF-8");
    MCPGW_FUZZ_CHECK(arguments->find_first_of("\r\n") == std::string_view::npos, "arguments' bytes on more than one line");
    auto again = json::parse(*arguments);
    MCPGW_FUZZ_CHECK(again && json::write(*again) == json::write(*dom),
                     "arguments' bytes that mean other JSON than the DOM path writes");
  }
  auto scanned = jsonrpc::scan_response(text);
  auto relayed = jsonrpc::Message::relayed(text);
  if (!scanned) {
    MCPGW_FUZZ_CHECK(!relayed, "a message relayed that the scanner refused");
    return 0;
  }
  auto doc = json::parse(text);
  MCPGW_FUZZ_CHECK(static_cast<bool>(doc), "a scanned message the DOM parser refuses");
  auto msg = jsonrpc::Message::from(std::move(*doc), text);
  MCPGW_FUZZ_CHECK(static_cast<bool>(msg), "a scanned message that is not a JSON-RPC message");
  MCPGW_FUZZ_CHECK(msg->kind() == jsonrpc::Kind::Response, "a scanned message that is no success response");
  const json::Value* result = msg->result();
  MCPGW_FUZZ_CHECK(result && result->IsObject(), "a scanned result that is not an object");

  MCPGW_FUZZ_CHECK(valid_utf8(scanned->result), "relayed bytes in ill-formed UTF-8");
  auto again = json::parse(scanned->result);
  MCPGW_FUZZ_CHECK(static_cast<bool>(again), "relayed bytes that are not JSON");
  MCPGW_FUZZ_CHECK(json::write(*again) == json::write(*result), "relayed bytes that mean other JSON than the DOM path writes");

  const json::Value* is_error = json::find(*result, "isError");
  MCPGW_FUZZ_CHECK(scanned->facts.is_error == (is_error && is_error->IsTrue()), "isError read otherwise than the DOM");
  const json::Value* meta = json::find(*result, "_meta");
  if (meta && json::find(*meta, "nextTool")) MCPGW_FUZZ_CHECK(scanned->facts.next_tool, "a nextTool missed");
  if (json::find(*result, "resultType")) MCPGW_FUZZ_CHECK(scanned->facts.result_type, "a resultType missed");
  for (std::string_view key : {"uri", "resourceUri", "ui/resourceUri"})
    if (has_key_anywhere(*result, key)) MCPGW_FUZZ_CHECK(scanned->facts.uri, "a resource reference missed");

  if (scanned->id.front() == '"') {
    MCPGW_FUZZ_CHECK(!relayed, "a string id relayed");
    return 0;
  }
  MCPGW_FUZZ_CHECK(msg->id().json() == scanned->id, "an id of other digits than the DOM path's");
  MCPGW_FUZZ_CHECK(relayed && relayed->raw(), "a scanned message not relayed");
  MCPGW_FUZZ_CHECK(relayed->raw()->result == scanned->result, "relayed() found another result");
  MCPGW_FUZZ_CHECK(relayed->id() == msg->id(), "relayed() under another id");
  const json::Value* built = relayed->result();
  MCPGW_FUZZ_CHECK(built && json::write(*built) == json::write(*result), "a relayed message built otherwise than read()");
  return 0;
}
