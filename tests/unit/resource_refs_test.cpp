// How upstream resource URIs are exposed (mcp/resource_refs.hpp): ui:// and
// skill:// keep their scheme, other URIs get the server joined to theirs,
// and every reference in a message follows the same rule.
#include <doctest/doctest.h>

#include "mcp/resource_refs.hpp"

using namespace mcpgw;

namespace {
json::Document parse(const char* text) { return std::move(*json::parse(text)); }
}  // namespace

TEST_CASE("resource refs: ui:// and skill:// keep their scheme, reversibly") {
  CHECK(mcp::expose_uri("alpha", "ui://get-time/mcp-app.html") == "ui://alpha/get-time/mcp-app.html");
  CHECK(mcp::expose_uri("alpha", "ui://dashboard") == "ui://alpha/dashboard");
  CHECK(mcp::expose_uri("sk", "skill://acme/billing/refunds/SKILL.md") == "skill://sk/acme/billing/refunds/SKILL.md");
  CHECK(mcp::expose_uri("docs", "file:///guide.md") == "docs+file:///guide.md");
  for (const char* uri : {"ui://get-time/mcp-app.html", "ui://dashboard", "skill://a/b/SKILL.md", "file:///x",
                          "demo://resource/session/x.gz"}) {
    INFO(uri);
    const std::string exposed = mcp::expose_uri("srv", uri);  // the split refers into it
    auto split = mcp::split_exposed_uri(exposed);
    REQUIRE(split);
    CHECK(split->server == "srv");
    CHECK(split->uri == uri);
  }
  CHECK_FALSE(mcp::split_exposed_uri("ui://nopath"));
  CHECK_FALSE(mcp::split_exposed_uri("ui:///x"));
  CHECK_FALSE(mcp::split_exposed_uri("file:///x"));
}

TEST_CASE("resource refs: tool definitions, results, contents, prompt messages and skill entries") {
  auto tool = parse(R"({"name":"t","_meta":{"ui":{"resourceUri":"ui://v/a.html","visibility":["app"]},"ui/resourceUri":"ui://v/a.html"}})");
  mcp::expose_tool_refs("s", tool, tool.GetAllocator());
  CHECK(json::write(tool["_meta"]) ==
        R"({"ui":{"resourceUri":"ui://s/v/a.html","visibility":["app"]},"ui/resourceUri":"ui://s/v/a.html"})");

  auto result = parse(R"({"content":[{"type":"text","text":"ui://v/a.html"},{"type":"resource_link","uri":"demo://x","name":"x"},)"
                      R"({"type":"resource","resource":{"uri":"ui://v/b.html","text":"<p>"}}],"_meta":{"ui":{"resourceUri":"ui://v/a.html"}}})");
  mcp::expose_result_refs("s", result, result.GetAllocator());
  CHECK(json::write(result) ==
        R"({"content":[{"type":"text","text":"ui://v/a.html"},{"type":"resource_link","uri":"s+demo://x","name":"x"},)"
        R"({"type":"resource","resource":{"uri":"ui://s/v/b.html","text":"<p>"}}],"_meta":{"ui":{"resourceUri":"ui://s/v/a.html"}}})");

  auto read = parse(R"({"contents":[{"uri":"ui://v/a.html","_meta":{"ui":{"csp":{"connectDomains":["https://x"]},"prefersBorder":true}}}]})");
  mcp::expose_contents("s", read, read.GetAllocator());
  CHECK(json::write(read) ==
        R"({"contents":[{"uri":"ui://s/v/a.html","_meta":{"ui":{"csp":{"connectDomains":["https://x"]},"prefersBorder":true}}}]})");

  auto prompt = parse(R"({"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"file:///a"}}},)"
                      R"({"role":"user","content":{"type":"text","text":"hi"}}]})");
  mcp::expose_messages("s", prompt, prompt.GetAllocator());
  CHECK(prompt["messages"][0]["content"]["resource"]["uri"] == "s+file:///a");

  auto entry = parse(R"({"uri":"skill://p/SKILL.md","frontmatter":{"name":"p"},)"
                     R"("resources":[{"uri":"skill://p/SKILL.md","digest":"sha256:00","size":3}]})");
  mcp::expose_skill_entry("s", entry, entry.GetAllocator());
  CHECK(json::write(entry) == R"({"uri":"skill://s/p/SKILL.md","frontmatter":{"name":"p"},)"
                              R"("resources":[{"uri":"skill://s/p/SKILL.md","digest":"sha256:00","size":3}]})");
}
