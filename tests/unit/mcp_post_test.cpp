// The MCP decisions about one POST (transport/mcp_post): which revision it
// speaks, the version header, the initialize rule, 2026-07-28's checks
// before anything runs and the status of its answer.
#include <doctest/doctest.h>

#include "mcp/era.hpp"
#include "transport/mcp_post.hpp"

using namespace mcpgw;
using namespace mcpgw::transport;

namespace {

http::Request post(std::string body, std::vector<http::Header> headers = {}) {
  return http::Request{"POST", "/mcp", std::move(headers), std::move(body)};
}

jsonrpc::Parsed parse(const http::Request& r) { return jsonrpc::parse(r.body); }

/// The JSON-RPC error code of response body `body`.
int code_of(SplicedText body) {
  auto d = json::parse(std::move(body).flatten());
  const json::Value* e = d ? json::find(*d, "error") : nullptr;
  const json::Value* c = e ? json::find(*e, "code") : nullptr;
  return c && c->IsInt() ? c->GetInt() : 0;
}

const char* kList = R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})";
const char* kClaim = R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})";

}  // namespace

TEST_CASE("mcp_post: a session, no claim or a session revision's header speak the session revisions") {
  auto plain = post(kList);
  CHECK(mcp_post::speaks_sessions(plain, parse(plain)));
  auto versioned = post(kList, {{"MCP-Protocol-Version", "2025-06-18"}});
  CHECK(mcp_post::speaks_sessions(versioned, parse(versioned)));
  auto modern = post(kList, {{"MCP-Protocol-Version", "2026-07-28"}});
  CHECK_FALSE(mcp_post::speaks_sessions(modern, parse(modern)));
  auto claims = post(kClaim);
  CHECK_FALSE(mcp_post::speaks_sessions(claims, parse(claims)));
  auto in_session = post(kClaim, {{"Mcp-Session-Id", "abc"}});
  CHECK(mcp_post::speaks_sessions(in_session, parse(in_session)));
}

TEST_CASE("mcp_post: the version header and the initialize rule") {
  CHECK_FALSE(mcp_post::unsupported_version(post(kList)));
  CHECK_FALSE(mcp_post::unsupported_version(post(kList, {{"MCP-Protocol-Version", "2025-03-26"}})));
  auto refused = mcp_post::unsupported_version(post(kList, {{"MCP-Protocol-Version", "1999-01-01"}}));
  REQUIRE(refused);
  CHECK(refused->status == 400);
  auto init = post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  CHECK(mcp_post::has_initialize(parse(init)));
  CHECK_FALSE(mcp_post::initialize_alone(parse(init)));
  auto batch = post(R"([{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}},{"jsonrpc":"2.0","id":2,"method":"ping"}])");
  CHECK(mcp_post::has_initialize(parse(batch)));
  CHECK(mcp_post::initialize_alone(parse(batch)));
  CHECK_FALSE(mcp_post::has_initialize(parse(post(kList))));
}

TEST_CASE("mcp_post: 2026-07-28 refuses batches, answers notifications with 202 and checks headers against the body") {
  auto batch = post(std::string("[") + kClaim + "]", {{"MCP-Protocol-Version", "2026-07-28"}});
  auto r = mcp_post::screen_stateless(batch, parse(batch));
  REQUIRE(r);
  CHECK(r->status == 400);
  auto note = post(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{}})",
                   {{"MCP-Protocol-Version", "2026-07-28"}});
  r = mcp_post::screen_stateless(note, parse(note));
  REQUIRE(r);
  CHECK(r->status == 202);
  auto no_version = post(kClaim);
  r = mcp_post::screen_stateless(no_version, parse(no_version));
  REQUIRE(r);
  CHECK(code_of(r->body) == mcp::kHeaderMismatch);
  CHECK(r->status == mcp::http_status(mcp::kHeaderMismatch, true));
}

TEST_CASE("mcp_post: Mcp-Param-* headers go to the context by lower-cased name; an answer's status is its error's") {
  ClientContext ctx;
  mcp_post::take_param_headers(post(kList, {{"Mcp-Param-Region", "eu"}, {"X-Other", "1"}}), ctx);
  CHECK(ctx.stateless);
  CHECK(ctx.has_param_headers);
  REQUIRE(ctx.param_headers.size() == 1);
  CHECK(ctx.param_headers[0].first == "region");
  CHECK(ctx.param_headers[0].second == "eu");
  CHECK(mcp_post::answer_status(0) == 200);
  CHECK(mcp_post::answer_status(-32602) == mcp::http_status(-32602, false));
}

namespace {

const char* kCall =
    R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fx%3Aecho","arguments":{},)"
    R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
    R"("io.modelcontextprotocol/clientCapabilities":{}}}})";

/// A stateless tools/call of `fx%3Aecho` with `method` and `name` as its
/// Mcp-Method and Mcp-Name headers.
http::Request call(std::string method, std::string name) {
  std::vector<http::Header> headers = {{"MCP-Protocol-Version", "2026-07-28"}};
  headers.push_back({"Mcp-Method", std::move(method)});
  headers.push_back({"Mcp-Name", std::move(name)});
  return post(kCall, std::move(headers));
}

/// That `r` is the refusal of headers that disagree with the body.
void check_mismatch(const std::optional<http::Response>& r) {
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(code_of(r->body) == mcp::kHeaderMismatch);
}

mcp_post::Checks exact() {
  mcp_post::Checks c;
  c.exact_headers = true;
  return c;
}

}  // namespace

TEST_CASE("mcp_post: Mcp-Name may stand for the percent-decoded body name, unless the headers must be exact") {
  auto decoded = call("tools/call", "fx:echo");
  CHECK_FALSE(mcp_post::screen_stateless(decoded, parse(decoded)));
  check_mismatch(mcp_post::screen_stateless(decoded, parse(decoded), exact()));
  auto as_sent = call("tools/call", "fx%3Aecho");
  CHECK_FALSE(mcp_post::screen_stateless(as_sent, parse(as_sent), exact()));
  auto base64 = call("tools/call", "=?base64?ZnglM0FlY2hv?=");
  CHECK_FALSE(mcp_post::screen_stateless(base64, parse(base64), exact()));
}

TEST_CASE("mcp_post: Mcp-Method in its =?base64?...?= form is taken, unless the headers must be exact") {
  auto encoded = call("=?base64?dG9vbHMvY2FsbA==?=", "fx%3Aecho");
  CHECK_FALSE(mcp_post::screen_stateless(encoded, parse(encoded)));
  check_mismatch(mcp_post::screen_stateless(encoded, parse(encoded), exact()));
}

TEST_CASE("mcp_post: a caller's envelope reader replaces read_envelope, after the version header, before Mcp-Method") {
  std::string seen;
  mcp_post::Checks c;
  c.envelope = [&seen](const jsonrpc::Message&, std::string_view version) -> std::optional<mcp::Refusal> {
    seen = version;
    return mcp::Refusal{-32099, "refused by the caller", json::Document()};
  };
  auto wrong_method = call("prompts/get", "fx%3Aecho");
  auto r = mcp_post::screen_stateless(wrong_method, parse(wrong_method), c);
  REQUIRE(r);
  CHECK(seen == "2026-07-28");
  CHECK(r->status == 400);
  CHECK(code_of(r->body) == -32099);

  seen.clear();
  auto no_version = post(kCall, {{"Mcp-Method", "tools/call"}, {"Mcp-Name", "fx%3Aecho"}});
  check_mismatch(mcp_post::screen_stateless(no_version, parse(no_version), c));
  CHECK(seen.empty());

  // A reader that takes what read_envelope would refuse (no _meta at all).
  c.envelope = [](const jsonrpc::Message&, std::string_view) { return std::optional<mcp::Refusal>(); };
  auto bare = post(R"({"jsonrpc":"2.0","id":8,"method":"tools/list"})",
                   {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/list"}});
  CHECK(mcp_post::screen_stateless(bare, parse(bare)));
  CHECK_FALSE(mcp_post::screen_stateless(bare, parse(bare), c));
}
