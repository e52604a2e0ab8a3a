#pragma once
// How the resource URIs of a prefixed upstream are exposed to clients, and
// every place a message refers to one. `ui://` (MCP Apps) and `skill://`
// (Skills) keep their scheme, which the extensions require:
// `ui://<rest>` of server S is `ui://S/<rest>` (reversible: server names
// cannot hold '/'); any other URI is `S+<uri>` (the server name joins the
// scheme).
#include <optional>
#include <string>
#include <string_view>

#include "jsonrpc/json.hpp"

namespace mcpgw::mcp {

/// The MCP Apps extension's identifier and the MIME type of its views.
inline constexpr std::string_view kUiExtension = "io.modelcontextprotocol/ui";
inline constexpr std::string_view kAppMimeType = "text/html;profile=mcp-app";
/// The Skills extension's identifier (SEP-2640).
inline constexpr std::string_view kSkillsExtension = "io.modelcontextprotocol/skills";

/// The exposed form of upstream URI `uri` of server `server`.
std::string expose_uri(std::string_view server, std::string_view uri);

/// A URI split back into the server it names and that server's own URI.
struct UpstreamUri {
  std::string_view server;
  std::string uri;
};

/// The server and upstream URI an exposed URI names by the rule above, or
/// nullopt when `uri` has neither form. Whether the server exists is the
/// caller's question.
std::optional<UpstreamUri> split_exposed_uri(std::string_view uri);

/// Whether `uri` uses a scheme that keeps its name when exposed.
bool keeps_scheme(std::string_view uri);

/// Rewrites the references to server `server`'s resources in a tool
/// definition: `_meta.ui.resourceUri` and `_meta["ui/resourceUri"]`.
void expose_tool_refs(std::string_view server, json::Value& tool, json::Allocator& a);

/// Rewrites the references in a tool result (`resource_link` and embedded
/// `resource` content, `_meta.ui.resourceUri`). Looks only at the content
/// items' types and the result's `_meta`, so a result without references
/// costs a few comparisons.
void expose_result_refs(std::string_view server, json::Value& result, json::Allocator& a);

/// Rewrites `contents[].uri` of a resources/read result.
void expose_contents(std::string_view server, json::Value& result, json::Allocator& a);

/// Rewrites the embedded resources and resource links of a prompts/get
/// result's messages.
void expose_messages(std::string_view server, json::Value& result, json::Allocator& a);

/// Rewrites the URIs of a skills/list or skills/get entry (`uri` and every
/// `resources[].uri`); frontmatter, digests and sizes stay as they are.
void expose_skill_entry(std::string_view server, json::Value& entry, json::Allocator& a);

}  // namespace mcpgw::mcp
