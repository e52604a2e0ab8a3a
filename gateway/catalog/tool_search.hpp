#pragma once
// Tool search over a catalog snapshot (`discovery: search`): the names of
// the two meta tools, what is indexed of a tool, and what a query finds in a
// mode. The snapshot owns its index (search/index.hpp), built with it.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catalog/catalog.hpp"
#include "jsonrpc/json.hpp"
#include "search/index.hpp"

namespace mcpgw::catalog {

/// The meta tools a search mode lists. Their names are fixed and take
/// precedence: an upstream tool exposed under one of them is hidden in
/// search modes.
inline constexpr std::string_view kSearchTools = "search_tools";
inline constexpr std::string_view kCallTool = "call_tool";

/// Whether `name` is one of the meta tools.
bool is_meta_tool(std::string_view name);

/// What the index holds of tool `def` (a Tool object) exposed as `name`: the
/// name, title, description (as the origin wrote it, without the gateway's
/// prefix) and the names and descriptions of its parameters.
search::Document document_of(const json::Value& def, std::string_view name);

/// The best `limit` tools of mode `mode` for `query`, best first (`doc` is
/// an index into Snapshot::tools). The query syntax: words in any order,
/// ranked by BM25; `server:NAME` keeps the tools of that server or plugin
/// (alone, it lists them in catalog order); a query that is exactly an
/// exposed name puts that tool first.
/// `permitted` (by tool index; null: every tool) leaves out what the
/// policies hide from the client.
std::vector<search::Hit> find_tools(const Snapshot& s, std::size_t mode, std::string_view query, std::size_t limit,
                                    const std::vector<bool>* permitted = nullptr);

/// Whether `query` has anything find_tools() can work with (a known word, a
/// `server:` word or an exact name); false for an empty or useless query.
bool meaningful_query(const Snapshot& s, std::string_view query);

/// The tools mode `mode` may call (of `permitted`, when not null), counted
/// by server or plugin, in catalog order.
std::vector<std::pair<std::string, std::size_t>> tools_by_origin(const Snapshot& s, std::size_t mode,
                                                                 const std::vector<bool>* permitted = nullptr);

/// The query syntax, as told to clients and operators.
extern const std::string_view kSearchSyntax;

}  // namespace mcpgw::catalog
