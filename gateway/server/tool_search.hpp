#pragma once
// Tool search (`discovery: search`) on the wire: the tools/list of a search
// mode (search_tools and call_tool), search_tools answered here, and the
// exposed tool a call_tool stands for, which tools/call and tools/callSaga
// then call exactly as if the client had named it.
#include <cstddef>
#include <optional>
#include <string_view>
#include <variant>

#include "server/methods.hpp"

namespace mcpgw::server {

/// Whether mode `mode` of `s` lists the meta tools instead of its tools.
bool lists_meta_tools(const catalog::Snapshot& s, std::optional<std::size_t> mode);

/// The tools/list of a search mode: search_tools and call_tool.
Answer list_meta_tools(Request& r, std::size_t page_size);

/// The tool a call is for, after the meta tools are read.
struct ToolTarget {
  std::string_view name;
  const json::Value* args = nullptr;  ///< null: no arguments
  bool through_call_tool = false;     ///< the client called call_tool
};

/// How a call of `name` with `args` by a client of mode `mode` goes: in a
/// search mode, search_tools is answered here (the Answer) and call_tool
/// names the tool to call (or is refused with -32602); otherwise, and for
/// any other name, the tool is `name` itself. `permitted` (by tool index;
/// null: every tool) is what the policies let the client see: search_tools
/// finds and counts nothing else.
std::variant<Answer, ToolTarget> resolve_meta_tool(const catalog::Snapshot& s, std::optional<std::size_t> mode,
                                                   std::string_view name, const json::Value* args,
                                                   const std::vector<bool>* permitted = nullptr);

/// search_tools' `limit`: its default and largest value.
inline constexpr std::size_t kDefaultSearchLimit = 8, kMaxSearchLimit = 50;

}  // namespace mcpgw::server
