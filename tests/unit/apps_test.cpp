// The view script (server/apps.hpp): where it goes in a view's HTML, and
// that nothing else of the view changes.
#include <doctest/doctest.h>

#include "server/apps.hpp"
#include "util/base64.hpp"

using namespace mcpgw;

namespace {

/// The view text after tagging `html` (served as `ui://v/x.html`) for server s.
std::string tagged(const std::string& html, const char* mime = "text/html;profile=mcp-app") {
  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  json::Value c(rapidjson::kObjectType);
  c.AddMember("uri", "ui://s/v/x.html", a);
  c.AddMember("mimeType", json::str(mime, a), a);
  c.AddMember("text", json::str(html, a), a);
  json::Value contents(rapidjson::kArrayType);
  contents.PushBack(c, a);
  r.AddMember("contents", contents, a);
  server::tag_view_contents("s", r, a);
  return r["contents"][0]["text"].GetString();
}

/// What came before and after the script.
std::pair<std::string, std::string> around(const std::string& out) {
  auto start = out.find("<script>/* mcpgw");
  auto end = out.find("</script>", start);
  REQUIRE(start != std::string::npos);
  return {out.substr(0, start), out.substr(end + 9)};
}

}  // namespace

TEST_CASE("view script: first in <head>, the rest of the view unchanged") {
  CHECK(around(tagged("<!DOCTYPE html><html><head><title>t</title></head><body>b</body></html>")) ==
        std::make_pair(std::string("<!DOCTYPE html><html><head>"), std::string("<title>t</title></head><body>b</body></html>")));
  CHECK(around(tagged("<HTML lang=en><HEAD data-x=\"1\">\n<meta></HEAD><BODY></BODY></HTML>")).first ==
        "<HTML lang=en><HEAD data-x=\"1\">");
  // <header> is not <head>; without <head> the script follows <html>.
  CHECK(around(tagged("<html><body><header>h</header></body></html>")).first == "<html>");
  // Neither: after the doctype, never before it.
  CHECK(around(tagged("<!doctype html><p>x</p>")).first == "<!doctype html>");
  CHECK(around(tagged("<p>x</p>")).first.empty());
  CHECK(tagged("<html><head></head></html>").find("var S=\"s\"") != std::string::npos);
}

TEST_CASE("view script: only views (ui:// and text/html;profile=mcp-app), text or blob") {
  CHECK(tagged("<html><head></head></html>", "text/html") == "<html><head></head></html>");
  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  json::Value c(rapidjson::kObjectType);
  c.AddMember("uri", "ui://s/v/x.html", a);
  c.AddMember("mimeType", "text/html;profile=mcp-app", a);
  c.AddMember("blob", json::str(base64("<html><head></head></html>"), a), a);
  json::Value contents(rapidjson::kArrayType);
  contents.PushBack(c, a);
  r.AddMember("contents", contents, a);
  server::tag_view_contents("s", r, a);
  auto html = unbase64(r["contents"][0]["blob"].GetString());
  REQUIRE(html);
  CHECK(html->rfind("<html><head><script>/* mcpgw", 0) == 0);
}
