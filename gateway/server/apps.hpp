#pragma once
// MCP Apps through the gateway: which server a view's requests belong to.
// A view (the `ui://` HTML a tool names) calls its server's tools, and
// reads its server's resources, by the names that server knows, through
// its host, which sends them to the gateway like any other request. The
// gateway serves each view of a prefixed server with a small script, first
// in its <head>, that puts the server's name in `_meta["mcpgw/server"]` of
// those requests (apps.tag_views); without it, a bare name reaches the one
// visible server that has it.
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "catalog/catalog.hpp"
#include "server/methods.hpp"

namespace mcpgw::server {

/// The `_meta` key naming the server of the view that sent a request.
inline constexpr std::string_view kViewServerKey = "mcpgw/server";

/// The server named by `params._meta["mcpgw/server"]`, when it is a prefixed
/// server of `snap`.
std::optional<std::string> view_server(const catalog::Snapshot& snap, const json::Value* params);

/// The tool a client's tools/call of `name` means, in mode `mode`: an
/// exposed name; from a view of server `view`, that server's own tool of
/// that name first; else a bare upstream name that exactly one visible
/// server has. An ambiguous bare name is -32602 naming the exposed
/// candidates; nullptr means unknown (or hidden) to this client.
std::variant<const catalog::ExposedTool*, Answer> resolve_tool(const catalog::Snapshot& snap, std::size_t mode,
                                                               std::string_view name,
                                                               const std::optional<std::string>& view);

/// Whether some tool of `snap` is `name`, exposed or bare, in any mode (a
/// call of it from a mode that hides it is audited as refused).
bool names_some_tool(const catalog::Snapshot& snap, std::string_view name);

/// Where a resources/read of `uri` from a view of server `view` goes: that
/// server's own URI (listed by it, or not listed anywhere), or an exposed
/// URI of that server. Another server's resource is the Answer (-32602).
std::variant<catalog::Route, Answer> route_view_resource(const catalog::Snapshot& snap, std::string_view uri,
                                                         const std::string& view);

/// Puts the view script of `server` first in the <head> of a view's HTML
/// (`contents[]` items of mimeType text/html;profile=mcp-app, as text or
/// base64 blob), so the view's requests name their server.
void tag_view_contents(std::string_view server, json::Value& result, json::Allocator& a);

}  // namespace mcpgw::server
