#include "mcp/resource_refs.hpp"

#include <array>

namespace mcpgw::mcp {
namespace {

constexpr std::array<std::string_view, 2> kKeptSchemes = {"ui://", "skill://"};
constexpr char kUriJoin = '+';

/// The length of the kept scheme `uri` starts with ("ui://" → 5), else 0.
std::size_t kept_prefix(std::string_view uri) {
  for (auto s : kKeptSchemes)
    if (uri.substr(0, s.size()) == s) return s.size();
  return 0;
}

/// Replaces string member `key` of `obj` by its exposed form.
void expose_member(std::string_view server, json::Value& obj, std::string_view key, json::Allocator& a) {
  json::Value* v = json::find(obj, key);
  if (!v || !v->IsString()) return;
  *v = json::str(expose_uri(server, std::string_view(v->GetString(), v->GetStringLength())), a);
}

/// Rewrites one content block (of a tool result or a prompt message).
void expose_content_item(std::string_view server, json::Value& item, json::Allocator& a) {
  auto type = json::get_string(item, "type");
  if (type == "resource_link") {
    expose_member(server, item, "uri", a);
  } else if (type == "resource") {
    if (json::Value* r = json::find(item, "resource"); r && r->IsObject()) expose_member(server, *r, "uri", a);
  }
}

void expose_ui_meta(std::string_view server, json::Value& owner, json::Allocator& a) {
  json::Value* meta = json::find(owner, "_meta");
  if (!meta || !meta->IsObject()) return;
  if (json::Value* ui = json::find(*meta, "ui"); ui && ui->IsObject()) expose_member(server, *ui, "resourceUri", a);
  expose_member(server, *meta, "ui/resourceUri", a);
}

}  // namespace

bool keeps_scheme(std::string_view uri) { return kept_prefix(uri) != 0; }

std::string expose_uri(std::string_view server, std::string_view uri) {
  if (std::size_t n = kept_prefix(uri)) {
    std::string out(uri.substr(0, n));
    out += server;
    out += '/';
    out += uri.substr(n);
    return out;
  }
  std::string out(server);
  out += kUriJoin;
  out += uri;
  return out;
}

std::optional<UpstreamUri> split_exposed_uri(std::string_view uri) {
  if (std::size_t n = kept_prefix(uri)) {
    auto slash = uri.find('/', n);
    if (slash == std::string_view::npos || slash == n) return std::nullopt;
    return UpstreamUri{uri.substr(n, slash - n), std::string(uri.substr(0, n)) + std::string(uri.substr(slash + 1))};
  }
  auto join = uri.find(kUriJoin);
  if (join == std::string_view::npos || join == 0) return std::nullopt;
  return UpstreamUri{uri.substr(0, join), std::string(uri.substr(join + 1))};
}

void expose_tool_refs(std::string_view server, json::Value& tool, json::Allocator& a) {
  expose_ui_meta(server, tool, a);
}

void expose_result_refs(std::string_view server, json::Value& result, json::Allocator& a) {
  if (!result.IsObject()) return;
  if (json::Value* content = json::find(result, "content"); content && content->IsArray())
    for (auto& item : content->GetArray()) expose_content_item(server, item, a);
  expose_ui_meta(server, result, a);
}

void expose_contents(std::string_view server, json::Value& result, json::Allocator& a) {
  json::Value* contents = json::find(result, "contents");
  if (!contents || !contents->IsArray()) return;
  for (auto& c : contents->GetArray()) expose_member(server, c, "uri", a);
}

void expose_messages(std::string_view server, json::Value& result, json::Allocator& a) {
  json::Value* messages = json::find(result, "messages");
  if (!messages || !messages->IsArray()) return;
  for (auto& m : messages->GetArray())
    if (json::Value* content = json::find(m, "content"); content && content->IsObject())
      expose_content_item(server, *content, a);
}

void expose_skill_entry(std::string_view server, json::Value& entry, json::Allocator& a) {
  expose_member(server, entry, "uri", a);
  json::Value* resources = json::find(entry, "resources");
  if (!resources || !resources->IsArray()) return;
  for (auto& r : resources->GetArray()) expose_member(server, r, "uri", a);
}

}  // namespace mcpgw::mcp
