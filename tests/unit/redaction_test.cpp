// The server's redaction (server/redaction): what a tool's reply, its
// arguments and a span become under redact:, with the configuration's own
// compiled detectors.
#include <doctest/doctest.h>

#include "config/config.hpp"
#include "mcp/protocol.hpp"
#include "server/redaction.hpp"

using namespace mcpgw;
using namespace mcpgw::server;

namespace {

config::Redact redact_of(const std::string& yaml) {
  auto c = config::parse(yaml, "gw.yaml", [](const std::string&) { return std::optional<std::string>(); });
  REQUIRE_MESSAGE(c.ok(), (c.ok() ? std::string() : c.error()));
  return c->redact;
}

upstream::Reply result_with(const std::string& json) {
  auto d = json::parse(json);
  REQUIRE(d);
  return upstream::Reply{false, std::move(*d)};
}

}  // namespace

TEST_CASE("redaction: a tool's reply masked, counted by detector") {
  Metrics metrics;
  auto cfg = redact_of("redact: {}\n");
  auto reply = result_with(R"({"content":[{"type":"text","text":"AKIAIOSFODNN7EXAMPLE"}],"structuredContent":{"k":"ghp_16C7e42F292c6912E7710c838347Ae178B4a"}})");
  Redaction r = redact_reply(cfg, Relayed::ToolResult, reply, metrics);
  CHECK_FALSE(r.refused);
  CHECK(r.tally.total() == 2);
  CHECK(r.counts_json(cfg) == R"({"aws_access_key_id":1,"github_token":1})");
  CHECK(json::write(reply.body) ==
        R"({"content":[{"type":"text","text":"[REDACTED:aws_access_key_id]"}],"structuredContent":{"k":"[REDACTED:github_token]"}})");
  CHECK(metrics.render().find(R"(mcpgw_redactions_total{detector="github_token"} 1)") != std::string::npos);

  // A JSON-RPC error's message too.
  upstream::Reply error = upstream::Reply::error(-32000, "failed with password=hunter22");
  redact_reply(cfg, Relayed::ToolResult, error, metrics);
  CHECK(error.rpc_error);
  CHECK(json::get_string(error.body, "message") == "failed with password=[REDACTED:secret_assignment]");

  // Not in the directions configured: left alone.
  auto args_only = redact_of("redact: {in: [arguments]}\n");
  auto untouched = result_with(R"({"content":[{"type":"text","text":"AKIAIOSFODNN7EXAMPLE"}]})");
  CHECK(redact_reply(args_only, Relayed::ToolResult, untouched, metrics).tally.total() == 0);
  CHECK(json::write(untouched.body).find("AKIAIOSFODNN7EXAMPLE") != std::string::npos);
}

TEST_CASE("redaction: refuse replaces the reply: an isError result for a tool, an error otherwise") {
  Metrics metrics;
  auto cfg = redact_of("redact: {action: refuse}\n");
  auto tool = result_with(R"({"content":[{"type":"text","text":"key AKIAIOSFODNN7EXAMPLE"}]})");
  Redaction r = redact_reply(cfg, Relayed::ToolResult, tool, metrics);
  CHECK(r.refused);
  CHECK_FALSE(tool.rpc_error);
  CHECK(json::write(tool.body) ==
        R"x({"content":[{"type":"text","text":"Refused by redaction: a secret in the tool's answer (detector aws_access_key_id)"}],"isError":true})x");
  auto resource = result_with(R"({"contents":[{"uri":"x","text":"-----BEGIN PRIVATE KEY-----\nAA\n-----END PRIVATE KEY-----"}]})");
  CHECK(redact_reply(cfg, Relayed::Resource, resource, metrics).refused);
  CHECK(resource.rpc_error);
  CHECK(json::get_string(resource.body, "message") == "Refused by redaction: a secret in the resource (detector private_key)");
  // A clean reply passes.
  auto clean = result_with(R"({"content":[{"type":"text","text":"fine"}]})");
  CHECK_FALSE(redact_reply(cfg, Relayed::ToolResult, clean, metrics).refused);
}

TEST_CASE("redaction: arguments masked into a copy, or refused") {
  Metrics metrics;
  auto args = json::parse(R"({"a":"xoxb-1234567890-abcdefghij","n":1})");
  std::unique_ptr<json::Document> masked;
  Redaction r = redact_arguments(redact_of("redact: {}\n"), *args, masked, metrics);
  REQUIRE(masked);
  CHECK(json::write(*masked) == R"({"a":"[REDACTED:slack_token]","n":1})");
  CHECK(json::write(*args) == R"({"a":"xoxb-1234567890-abcdefghij","n":1})");
  CHECK(r.tally.total() == 1);

  std::unique_ptr<json::Document> none;
  auto refuse = redact_of("redact: {action: refuse}\n");
  Redaction refused = redact_arguments(refuse, *args, none, metrics);
  CHECK(refused.refused);
  CHECK_FALSE(none);
  CHECK(json::write(refused_arguments(refuse, refused).body) ==
        R"x({"content":[{"type":"text","text":"Refused by redaction: a secret in the call's arguments (detector slack_token)"}],"isError":true})x");
}

TEST_CASE("redaction: a span's name, attributes and status message masked; a clean span is not copied") {
  auto cfg = redact_of("redact: {}\n");
  mcp::Span span;
  span.name = "tools/call sec:leak";
  span.set("mcp.method.name", "tools/call");
  span.set("mcp.resource.uri", "https://x/?api_key=abc123456");
  span.fail("-32000", "cannot: AKIAIOSFODNN7EXAMPLE");
  auto masked = masked_span(*cfg.detectors, span);
  REQUIRE(masked);
  CHECK(masked->name == span.name);
  CHECK(masked->attribute("mcp.method.name") == "tools/call");
  CHECK(masked->attribute("mcp.resource.uri") == "https://x/?api_key=[REDACTED:secret_assignment]");
  CHECK(masked->attribute("error.type") == "-32000");
  CHECK(masked->status_message == "cannot: [REDACTED:aws_access_key_id]");
  CHECK(masked->error);

  mcp::Span clean;
  clean.name = "ping";
  clean.set("mcp.method.name", "ping");
  CHECK_FALSE(masked_span(*cfg.detectors, clean));
}

namespace {

/// `yaml`'s configuration, shared as the gateway holds it.
std::shared_ptr<const config::Config> config_of(const std::string& yaml) {
  auto c = config::parse(yaml, "gw.yaml", [](const std::string&) { return std::optional<std::string>(); });
  REQUIRE_MESSAGE(c.ok(), (c.ok() ? std::string() : c.error()));
  return std::make_shared<const config::Config>(std::move(*c));
}

}  // namespace

TEST_CASE("redaction: an upstream's notification or request to a client is masked, even under refuse") {
  Metrics metrics;
  RelayRedaction refuse{config_of("redact: {action: refuse}\n"), &metrics};
  auto params = json::parse(R"({"level":"info","data":{"note":"log glpat-AbCdEfGhIjKlMnOpQrSt"}})");
  REQUIRE(params);
  CHECK(redact_relayed(refuse, *params));
  CHECK(json::write(*params) == R"({"level":"info","data":{"note":"log [REDACTED:gitlab_token]"}})");
  CHECK(metrics.render().find(R"(mcpgw_redactions_total{detector="gitlab_token"} 1)") != std::string::npos);

  // Off: no configuration, or no results direction.
  auto clean = json::parse(R"({"message":"glpat-AbCdEfGhIjKlMnOpQrSt"})");
  CHECK_FALSE(redact_relayed(RelayRedaction{}, *clean));
  CHECK_FALSE(redact_relayed({config_of("redact: {in: [arguments]}\n"), &metrics}, *clean));
  CHECK(json::get_string(*clean, "message") == "glpat-AbCdEfGhIjKlMnOpQrSt");
}

TEST_CASE("redaction: an upstream's task: tasks/result as a tool's answer, a task's state masked") {
  Metrics metrics;
  RelayRedaction refuse{config_of("redact: {action: refuse}\n"), &metrics};
  auto result = result_with(R"({"content":[{"type":"text","text":"AKIAIOSFODNN7EXAMPLE"}]})");
  redact_task_reply(refuse, "tasks/result", result);
  CHECK_FALSE(result.rpc_error);
  CHECK(json::write(result.body).find("Refused by redaction: a secret in the tool's answer (detector aws_access_key_id)") !=
        std::string::npos);
  CHECK(metrics.render().find(R"(mcpgw_refused_total{reason="redaction"} 1)") != std::string::npos);

  // A 2026-07-28 task with its outcome inlined: the outcome refused, the rest masked.
  auto task = result_with(R"({"taskId":"t1","status":"completed","statusMessage":"done AKIAIOSFODNN7EXAMPLE",)"
                          R"("error":{"code":-32000,"message":"ghp_16C7e42F292c6912E7710c838347Ae178B4a"}})");
  redact_task_reply(refuse, "tasks/get", task);
  CHECK(json::get_string(task.body, "statusMessage") == "done [REDACTED:aws_access_key_id]");
  CHECK(json::find(task.body, "error") == nullptr);
  const json::Value* inlined = json::find(task.body, "result");
  REQUIRE(inlined);
  CHECK(json::find(*inlined, "isError")->IsTrue());
  CHECK(json::write(*inlined).find("detector github_token") != std::string::npos);

  // Under mask: every string masked, the outcome kept in place.
  RelayRedaction mask{config_of("redact: {}\n"), &metrics};
  auto masked = result_with(R"({"taskId":"t1","status":"completed","result":{"content":[{"type":"text","text":"AKIAIOSFODNN7EXAMPLE"}]}})");
  redact_task_reply(mask, "tasks/get", masked);
  CHECK(json::write(masked.body) ==
        R"({"taskId":"t1","status":"completed","result":{"content":[{"type":"text","text":"[REDACTED:aws_access_key_id]"}]}})");
}
