// libFuzzer target: what the 2026-07-28 revision parses from a client
// (gateway/mcp/era.*) and the base64 under it. The first byte of an input,
// modulo 3, picks the mode (fuzz_common.hpp):
//   kHeaderValue: the rest is an Mcp-Name / Mcp-Param-* header value for
//     decode_header_value (and encode_header_value, header_matches);
//   kMessage: the rest is a JSON-RPC body (a message or a batch) whose
//     requests go through claimed_version and read_envelope, with the first
//     line as the MCP-Protocol-Version header when the byte has kWithHeader,
//     and whose params go through the x-mcp-header helpers as a tool would;
//   kBase64: the rest is text for unbase64 / unbase64url and bytes to encode.
// Besides sanitizer reports, a crash is any broken property: an encoding
// that does not decode back, a decoding that is not canonical, an envelope
// accepted with a version it does not speak or other than the header's, a
// refusal with an unexpected code, an invalid JSON error response, a header
// name that is not an HTTP token when its schema was found valid.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_common.hpp"
#include "jsonrpc/message.hpp"
#include "mcp/era.hpp"

using namespace mcpgw;

namespace {

bool printable(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

bool http_token(std::string_view s) {
  constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          kExtra.find(c) != std::string_view::npos))
      return false;
  return true;
}

void header_value(std::string_view text) {
  if (auto d = mcp::decode_header_value(text)) {
    std::string again = mcp::encode_header_value(*d);
    MCPGW_FUZZ_CHECK(mcp::decode_header_value(again) == *d, "a decoded header value does not survive encode -> decode");
  }
  std::string encoded = mcp::encode_header_value(text);
  MCPGW_FUZZ_CHECK(!encoded.empty() && printable(encoded), "an encoded header value that is not printable ASCII");
  MCPGW_FUZZ_CHECK(mcp::decode_header_value(encoded) == std::string(text), "encode -> decode changed a header value");
  MCPGW_FUZZ_CHECK(mcp::header_matches(text, text), "a header value that does not match itself");
}

void envelope(const jsonrpc::Message& m, std::optional<std::string_view> header) {
  (void)mcp::claimed_version(m);
  auto r = mcp::read_envelope(m, header);
  if (const auto* e = std::get_if<mcp::Envelope>(&r)) {
    MCPGW_FUZZ_CHECK(mcp::is_stateless_version(e->version), "an envelope accepted with a version it does not speak");
    MCPGW_FUZZ_CHECK(!header || *header == e->version, "an envelope accepted against another header version");
    MCPGW_FUZZ_CHECK(e->capabilities.IsObject(), "client capabilities that are not an object");
    MCPGW_FUZZ_CHECK(e->log_level.empty() || mcp::log_level_rank(e->log_level) >= 0, "an unknown log level accepted");
    (void)json::write(e->capabilities);
    return;
  }
  const auto& f = std::get<mcp::Refusal>(r);
  MCPGW_FUZZ_CHECK(f.code == jsonrpc::kInvalidParams || f.code == mcp::kHeaderMismatch ||
                       f.code == mcp::kUnsupportedVersion,
                   "an envelope refusal with an unexpected code");
  MCPGW_FUZZ_CHECK(!f.message.empty() && mcp::http_status(f.code, true) == 400, "an envelope refusal that is not a 400");
  if (f.code == mcp::kUnsupportedVersion)
    MCPGW_FUZZ_CHECK(f.data.IsObject() && json::find(f.data, "supported"), "a -32022 refusal without its data");
  // What a reply carrying the refusal serialises must be JSON again.
  std::string reply = jsonrpc::make_error(m.id(), f.code, f.message, f.data.IsNull() ? nullptr : &f.data);
  MCPGW_FUZZ_CHECK(json::parse(reply).ok(), "an error reply that is not JSON");
}

void tool_schema(const json::Value& params, std::string_view method) {
  // The params stand in for a tool: {inputSchema, arguments}.
  std::string problem = mcp::x_mcp_header_problem(params);
  auto headers = mcp::param_headers(params, json::find(params, "arguments"));
  for (const auto& [name, value] : headers) {
    MCPGW_FUZZ_CHECK(name.rfind("Mcp-Param-", 0) == 0, "a parameter header without its prefix");
    // A schema found valid yields header names a peer can parse (a name with
    // NUL, CR or LF must be refused: it would split the header).
    if (problem.empty())
      MCPGW_FUZZ_CHECK(http_token(std::string_view(name).substr(10)),
                       "a parameter header name that is not an HTTP token, from a schema found valid");
    MCPGW_FUZZ_CHECK(printable(value) && mcp::decode_header_value(value).has_value(),
                     "a parameter header value that is not printable or does not decode");
  }
  json::Document result = json::clone(params);
  mcp::stamp_result(result, method, "public", result.GetAllocator());
  (void)json::write(result);
  if (const char* named = mcp::named_param(method)) (void)json::get_string(params, named);
  (void)mcp::removed_in_stateless(method);
}

void message(std::string_view text, bool with_header) {
  std::optional<std::string_view> header;
  if (with_header) {
    auto nl = text.find('\n');
    if (nl == std::string_view::npos) return;
    header = text.substr(0, nl);
    text.remove_prefix(nl + 1);
  }
  jsonrpc::Parsed parsed = jsonrpc::parse(text);
  for (const auto& e : parsed.errors) MCPGW_FUZZ_CHECK(json::parse(e).ok(), "an error response that is not JSON");
  for (const auto& m : parsed.messages) {
    if (!m.is_request() && !m.is_notification()) continue;
    envelope(m, header);
    if (const json::Value* p = m.params(); p && p->IsObject()) tool_schema(*p, m.method());
  }
}

void base64_text(std::string_view text) {
  MCPGW_FUZZ_CHECK(unbase64(base64(text)) == std::string(text), "base64 does not decode back");
  MCPGW_FUZZ_CHECK(unbase64url(base64url(text)) == std::string(text), "base64url does not decode back");
  if (auto d = unbase64(text)) MCPGW_FUZZ_CHECK(base64(*d) == text, "unbase64 accepted a non-canonical text");
  if (auto d = unbase64url(text)) MCPGW_FUZZ_CHECK(base64url(*d) == text, "unbase64url accepted a non-canonical text");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t mode = data[0];
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (mode % 3) {
    case fuzz::kHeaderValue: header_value(rest); break;
    case fuzz::kMessage: message(rest, mode & fuzz::kWithHeader); break;
    default: base64_text(rest); break;
  }
  return 0;
}
