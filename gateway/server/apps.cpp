#include "server/apps.hpp"

#include <algorithm>
#include <cctype>

#include "mcp/resource_refs.hpp"
#include "util/base64.hpp"

namespace mcpgw::server {
namespace {

/// The view script: replaces the view's `window.parent` by an object whose
/// postMessage adds `_meta["mcpgw/server"]` to the tools/call and
/// resources/read requests the view sends, and makes messages from the real
/// parent report that object as their source (the ext-apps App checks
/// `event.source === window.parent`). Everything else passes unchanged.
constexpr std::string_view kScriptHead = "<script>/* mcpgw: names this view's server on its requests */(function(){var S=";
constexpr std::string_view kScriptTail =
    R"(,K="mcpgw/server",P=window.parent;if(!P||P===window)return;)"
    R"(function tag(m){if(!m||typeof m!=="object"||m.jsonrpc!=="2.0"||m.id===undefined||)"
    R"((m.method!=="tools/call"&&m.method!=="resources/read"))return m;)"
    R"(var p=Object.assign({},m.params),meta=Object.assign({},p._meta);meta[K]=S;p._meta=meta;)"
    R"(return Object.assign({},m,{params:p});})"
    R"(var W={postMessage:function(m){var a=Array.prototype.slice.call(arguments);a[0]=tag(m);)"
    R"(return P.postMessage.apply(P,a);}};)"
    R"(try{Object.defineProperty(window,"parent",{configurable:true,get:function(){return W;}});})"
    R"(catch(e){return;})"
    R"(var d=Object.getOwnPropertyDescriptor(MessageEvent.prototype,"source");)"
    R"(Object.defineProperty(MessageEvent.prototype,"source",{configurable:true,enumerable:d.enumerable,)"
    R"(get:function(){var s=d.get.call(this);return s===P?W:s;}});})();</script>)";

std::string script_for(std::string_view server) {
  std::string s(kScriptHead);
  s += json::quote(server);
  s += kScriptTail;
  return s;
}

/// Where the script goes: just after the opening <head ...> tag, else after
/// <html ...>, else after a <!DOCTYPE ...> (a script before it would put the
/// page in quirks mode), else at the start.
std::size_t insertion_point(std::string_view html) {
  // The tags a document opens with come before its body.
  std::string lower(html.substr(0, html.find("<body")));
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (std::string_view tag : {"<head", "<html", "<!doctype"}) {
    for (std::size_t at = lower.find(tag); at != std::string::npos; at = lower.find(tag, at + 1)) {
      char next = at + tag.size() < lower.size() ? lower[at + tag.size()] : '\0';
      if (next != '>' && !std::isspace(static_cast<unsigned char>(next))) continue;  // <header>, <html-x>
      auto close = lower.find('>', at);
      if (close != std::string::npos) return close + 1;
    }
  }
  return 0;
}

std::string with_script(std::string_view html, std::string_view server) {
  std::size_t at = insertion_point(html);
  std::string out;
  std::string script = script_for(server);
  out.reserve(html.size() + script.size());
  out.append(html.substr(0, at));
  out += script;
  out.append(html.substr(at));
  return out;
}

bool is_view(const json::Value& c) {
  auto mime = json::get_string(c, "mimeType");
  auto uri = json::get_string(c, "uri");
  return mime && mime->substr(0, mcp::kAppMimeType.size()) == mcp::kAppMimeType && uri &&
         uri->substr(0, 5) == "ui://";
}

bool app_only(const catalog::ExposedTool& t) {
  // Only tools with a `_meta.ui.visibility` can be app-only; the listed
  // definition is parsed only for those names.
  if (t.definition.find("\"visibility\"") == std::string::npos) return false;
  auto def = json::parse(t.definition);
  const json::Value* meta = def ? json::find(*def, "_meta") : nullptr;
  const json::Value* ui = meta ? json::find(*meta, "ui") : nullptr;
  const json::Value* vis = ui ? json::find(*ui, "visibility") : nullptr;
  if (!vis || !vis->IsArray()) return false;
  return std::none_of(vis->Begin(), vis->End(), [](const json::Value& v) { return v.IsString() && v == "model"; });
}

}  // namespace

std::optional<std::string> view_server(const catalog::Snapshot& snap, const json::Value* params) {
  const json::Value* meta = params ? json::find(*params, "_meta") : nullptr;
  auto server = meta ? json::get_string(*meta, kViewServerKey) : std::nullopt;
  if (!server || !snap.servers.count(std::string(*server))) return std::nullopt;
  return std::string(*server);
}

std::variant<const catalog::ExposedTool*, Answer> resolve_tool(const catalog::Snapshot& snap, std::size_t mode,
                                                               std::string_view name,
                                                               const std::optional<std::string>& view) {
  // The bare-name index is looked at only when the exposed name does not
  // answer (or for a view), so an ordinary call costs one lookup as before.
  auto bare = snap.upstream_tool_index.end();
  if (view) {
    bare = snap.upstream_tool_index.find(std::string(name));
    if (bare != snap.upstream_tool_index.end())
      for (std::size_t i : bare->second) {
        const auto& t = snap.tools[i];
        if (t.origin->name() == *view) return t.in_mode[mode] ? &t : nullptr;
      }
  }
  if (const catalog::ExposedTool* t = snap.find_tool(name, mode)) {
    // The extension: an app-only tool is callable by its own server's views.
    if (view && !t->composite && t->origin->name() != *view && app_only(*t))
      return Answer::invalid_params("tool " + std::string(name) + " of server " + t->origin->name() +
                                    " is callable only by that server's views, not by a view of " + *view);
    return t;
  }
  if (!view) bare = snap.upstream_tool_index.find(std::string(name));
  if (bare == snap.upstream_tool_index.end()) return nullptr;
  std::vector<const catalog::ExposedTool*> visible;
  for (std::size_t i : bare->second)
    if (snap.tools[i].in_mode[mode]) visible.push_back(&snap.tools[i]);
  if (visible.size() <= 1) return visible.empty() ? nullptr : visible[0];
  std::string names;
  for (const auto* t : visible) names += (names.empty() ? "" : ", ") + t->name;
  return Answer::invalid_params("tool name " + std::string(name) + " is ambiguous: it is " + names +
                                "; call one of these names");
}

bool names_some_tool(const catalog::Snapshot& snap, std::string_view name) {
  return snap.tool_index.count(std::string(name)) || snap.upstream_tool_index.count(std::string(name));
}

std::variant<catalog::Route, Answer> route_view_resource(const catalog::Snapshot& snap, std::string_view uri,
                                                         const std::string& view) {
  const auto& server = snap.servers.at(view);
  if (auto it = snap.raw_resource_index.find(std::string(uri)); it != snap.raw_resource_index.end())
    for (std::size_t i : it->second)
      if (snap.resources[i].origin == server) return catalog::Route{server, std::string(uri)};
  if (auto route = snap.route_resource(uri)) {
    if (route->origin == server) return std::move(*route);
    return Answer::invalid_params("a view of server " + view + " reads only " + view + "'s resources; " +
                                  std::string(uri) + " is server " + route->origin->name() + "'s");
  }
  // Not listed anywhere: the view's server may serve it unlisted.
  return catalog::Route{server, std::string(uri)};
}

void tag_view_contents(std::string_view server, json::Value& result, json::Allocator& a) {
  json::Value* contents = json::find(result, "contents");
  if (!contents || !contents->IsArray()) return;
  for (auto& c : contents->GetArray()) {
    if (!is_view(c)) continue;
    if (auto text = json::get_string(c, "text")) {
      json::set(c, "text", json::str(with_script(*text, server), a), a);
    } else if (auto blob = json::get_string(c, "blob")) {
      if (auto html = unbase64(*blob)) json::set(c, "blob", json::str(base64(with_script(*html, server)), a), a);
    }
  }
}

}  // namespace mcpgw::server
