#pragma once
// Reading `servers[].tools` (a part of config.cpp's schema, kept apart by
// subject): per-tool overrides, checked for what can be known without the
// server's listing (names, a fixed argument that also has a default, two
// names that collide).
#include <vector>

#include "config/tool_overrides.hpp"
#include "config/yaml_value.hpp"

namespace mcpgw::config {

/// `servers[].tools` of one server: a mapping keyed by the upstream's tool
/// names, in file order. Throws yaml::Invalid (FILE:LINE: key: message).
std::vector<ToolOverride> read_tool_overrides(const yaml::Value& v);

/// Whether `s` is a tool or argument name the gateway lets an override
/// give: [A-Za-z0-9_.-], 1 to `max` characters (MCP's recommendation for
/// tool names, and what popular clients accept for property names).
bool valid_override_name(std::string_view s, std::size_t max);

}  // namespace mcpgw::config
