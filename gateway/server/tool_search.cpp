#include "server/tool_search.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "catalog/tool_search.hpp"

namespace mcpgw::server {
namespace {

// The definitions are fixed (not made from the catalog of the moment): a
// model's prompt cache keeps them across list changes.
constexpr std::string_view kSearchToolsDefinition =
    R"({"name":"search_tools","title":"Search tools",)"
    R"("description":"Finds the tools of this gateway for a task. Describe what you want to do in a few words )"
    R"((e.g. \"account balance\"); the answer lists the best matching tools with their descriptions and input )"
    R"(schemas. Then call one with call_tool. Add server:NAME to search one server only; an empty query lists )"
    R"(the servers.",)"
    R"("inputSchema":{"type":"object","properties":{)"
    R"("query":{"type":"string","description":"What the tool should do, in a few words, or server:NAME"},)"
    R"("limit":{"type":"integer","minimum":1,"maximum":50,"default":8,"description":"How many tools to return"}},)"
    R"("required":["query"]},)"
    R"("annotations":{"title":"Search tools","readOnlyHint":true,"openWorldHint":false}})";

constexpr std::string_view kCallToolDefinition =
    R"({"name":"call_tool","title":"Call a tool",)"
    R"("description":"Calls a tool that search_tools found, by its exact name, with arguments that match its )"
    R"(inputSchema. The answer is that tool's own result.",)"
    R"("inputSchema":{"type":"object","properties":{)"
    R"("name":{"type":"string","description":"The exact name search_tools gave"},)"
    R"("arguments":{"type":"object","description":"The tool's arguments, per its inputSchema"}},)"
    R"("required":["name"]},)"
    R"("annotations":{"title":"Call a tool"}})";

json::Value text_content(std::string_view text, json::Allocator& a) {
  json::Value content(rapidjson::kArrayType);
  json::Value item(rapidjson::kObjectType);
  item.AddMember("type", "text", a);
  item.AddMember("text", json::str(text, a), a);
  content.PushBack(item, a);
  return content;
}

/// The answer to an empty or useless query, or one that finds nothing: the
/// servers of the mode with their tool counts and the query syntax.
Answer overview(const catalog::Snapshot& s, std::size_t mode, std::string_view query,
               const std::vector<bool>* permitted) {
  json::Document result(rapidjson::kObjectType);
  auto& a = result.GetAllocator();
  auto origins = catalog::tools_by_origin(s, mode, permitted);
  std::size_t total = 0;
  json::Value servers(rapidjson::kArrayType);
  std::string listing;
  for (const auto& [name, count] : origins) {
    json::Value e(rapidjson::kObjectType);
    e.AddMember("name", json::str(name, a), a);
    e.AddMember("tools", static_cast<std::uint64_t>(count), a);
    servers.PushBack(e, a);
    listing += (listing.empty() ? "" : ", ") + name + " (" + std::to_string(count) + (count == 1 ? " tool)" : " tools)");
    total += count;
  }
  std::string text;
  if (!query.empty()) text = "No tool matches \"" + std::string(query) + "\". ";
  text += std::to_string(total) + (total == 1 ? " tool" : " tools") + " can be searched";
  text += origins.empty() ? "." : ", from: " + listing + ".";
  text += "\n" + std::string(catalog::kSearchSyntax);
  json::Value structured(rapidjson::kObjectType);
  structured.AddMember("tools", json::Value(rapidjson::kArrayType), a);
  structured.AddMember("servers", servers, a);
  structured.AddMember("syntax", json::str(catalog::kSearchSyntax, a), a);
  result.AddMember("content", text_content(text, a), a);
  result.AddMember("structuredContent", structured, a);
  return Answer::result(std::move(result));
}

Answer search_tools(const catalog::Snapshot& s, std::size_t mode, const json::Value* args,
                    const std::vector<bool>* permitted) {
  std::string_view query;
  std::size_t limit = kDefaultSearchLimit;
  if (args) {
    if (const json::Value* q = json::find(*args, "query"); q && !q->IsNull()) {
      if (!q->IsString()) return Answer::invalid_params("search_tools: query must be a string");
      query = std::string_view(q->GetString(), q->GetStringLength());
    }
    if (const json::Value* l = json::find(*args, "limit"); l && !l->IsNull()) {
      if (!l->IsInt64() || l->GetInt64() < 1)
        return Answer::invalid_params("search_tools: limit must be an integer from 1 to " +
                                      std::to_string(kMaxSearchLimit));
      limit = static_cast<std::size_t>(std::min<std::int64_t>(l->GetInt64(), kMaxSearchLimit));
    }
  }
  if (!catalog::meaningful_query(s, query)) return overview(s, mode, query, permitted);
  auto hits = catalog::find_tools(s, mode, query, limit, permitted);
  if (hits.empty()) return overview(s, mode, query, permitted);

  json::Document result(rapidjson::kObjectType);
  auto& a = result.GetAllocator();
  json::Value tools(rapidjson::kArrayType);
  std::string text = std::to_string(hits.size()) + (hits.size() == 1 ? " tool" : " tools") + " for \"" +
                     std::string(query) + "\"; call one with call_tool {name, arguments}:";
  for (const auto& h : hits) {
    auto def = json::parse(s.tools[h.doc].definition);
    if (!def) continue;
    json::Value t(rapidjson::kObjectType);
    // `_meta` as listed, so a host can render a found tool's view.
    for (std::string_view key : {"name", "title", "description", "inputSchema", "annotations", "_meta"})
      if (const json::Value* v = json::find(*def, key))
        t.AddMember(json::str(key, a), json::copy(*v, a), a);
    text += "\n- " + s.tools[h.doc].name;
    if (auto d = json::get_string(*def, "description"); d && !d->empty()) text += ": " + std::string(*d);
    if (const json::Value* schema = json::find(*def, "inputSchema")) text += "\n  inputSchema: " + json::write(*schema);
    tools.PushBack(t, a);
  }
  json::Value structured(rapidjson::kObjectType);
  structured.AddMember("tools", tools, a);
  result.AddMember("content", text_content(text, a), a);
  result.AddMember("structuredContent", structured, a);
  return Answer::result(std::move(result));
}

}  // namespace

bool lists_meta_tools(const catalog::Snapshot& s, std::optional<std::size_t> mode) {
  return mode && *mode < s.search_modes.size() && s.search_modes[*mode];
}

Answer list_meta_tools(Request& r, std::size_t page_size) {
  static constexpr std::string_view kDefinitions[] = {kSearchToolsDefinition, kCallToolDefinition};
  return page_of(
      r, "tools", std::size(kDefinitions), [](std::size_t i) { return kDefinitions[i]; }, page_size, nullptr);
}

std::variant<Answer, ToolTarget> resolve_meta_tool(const catalog::Snapshot& s, std::optional<std::size_t> mode,
                                                   std::string_view name, const json::Value* args,
                                                   const std::vector<bool>* permitted) {
  if (!lists_meta_tools(s, mode)) return ToolTarget{name, args};
  if (name == catalog::kSearchTools) return search_tools(s, *mode, args, permitted);
  if (name != catalog::kCallTool) return ToolTarget{name, args};
  auto target = args ? json::get_string(*args, "name") : std::nullopt;
  if (!target)
    return Answer::invalid_params("call_tool: name must be a string, the exact name of a tool search_tools found");
  if (catalog::is_meta_tool(*target))
    return Answer::invalid_params("call_tool: " + std::string(*target) + " is called directly, not through call_tool");
  const json::Value* inner = json::find(*args, "arguments");
  if (inner && inner->IsNull()) inner = nullptr;
  if (inner && !inner->IsObject()) return Answer::invalid_params("call_tool: arguments must be an object");
  return ToolTarget{*target, inner, true};
}

}  // namespace mcpgw::server
