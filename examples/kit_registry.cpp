// Registration: tools, resources, resource templates and prompts, their
// definitions built once (a bad schema fails at startup, and a list only
// copies them), and the tools and prompts replaced while serving.
#include <algorithm>
#include <stdexcept>
#include <utility>

#include "kit_internal.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::examples {
namespace {

using detail::parse_or_throw;

/// Adds the optional descriptive members shared by resources, templates and prompts.
void add_optional(json::Value& def, const char* key, const std::string& value, json::Allocator& a) {
  if (!value.empty()) def.AddMember(json::ref(key), json::str(value, a), a);
}

}  // namespace

Server::Server(std::string name, std::string version)
    : name_(std::move(name)), version_(std::move(version)) {}

Server::~Server() = default;

std::shared_ptr<const Server::Tool> Server::make_tool(ToolSpec spec) {
  if (static_cast<bool>(spec.handler) == static_cast<bool>(spec.context_handler))
    throw std::invalid_argument("tool " + spec.name + ": give exactly one of handler and context_handler");
  // Built once here, so tools/list only copies and a typo in a schema fails
  // at startup rather than on the first list.
  json::Document def(rapidjson::kObjectType);
  auto& a = def.GetAllocator();
  def.AddMember("name", json::str(spec.name, a), a);
  if (!spec.title.empty()) def.AddMember("title", json::str(spec.title, a), a);
  if (!spec.description.empty()) def.AddMember("description", json::str(spec.description, a), a);
  const std::pair<const char*, const JsonText*> fragments[] = {
      {"inputSchema", &spec.input_schema},
      {"outputSchema", &spec.output_schema},
      {"annotations", &spec.annotations},
      {"_meta", &spec.meta},
      {"execution", &spec.execution},
  };
  for (const auto& [key, text] : fragments) {
    if (text->empty()) continue;
    json::Document frag = parse_or_throw(*text, spec.name + "." + key);
    def.AddMember(json::ref(key), json::copy(frag, a), a);
  }
  return std::make_shared<const Tool>(Tool{std::move(spec.name), std::move(def), std::move(spec.handler),
                                           std::move(spec.context_handler)});
}

void Server::add_tool(ToolSpec spec) {
  auto tool = make_tool(std::move(spec));
  util::MutexLock lock(registry_mutex_);
  for (const auto& t : tools_)
    if (t->name == tool->name) throw std::invalid_argument("duplicate tool: " + tool->name);
  tools_.push_back(std::move(tool));
}

void Server::replace_tool(ToolSpec spec) {
  auto tool = make_tool(std::move(spec));
  {
    util::MutexLock lock(registry_mutex_);
    auto it = std::find_if(tools_.begin(), tools_.end(), [&](const auto& t) { return t->name == tool->name; });
    if (it == tools_.end()) throw std::invalid_argument("replace_tool: unknown tool " + tool->name);
    // A call running the old tool holds its own reference to it.
    *it = std::move(tool);
  }
  notify_list_changed(ListKind::Tools);
}

std::shared_ptr<const Server::Tool> Server::find_tool(std::string_view name) const {
  util::MutexLock lock(registry_mutex_);
  for (const auto& t : tools_)
    if (t->name == name) return t;
  return nullptr;
}

void Server::add_resource(ResourceSpec spec) {
  for (const Resource& r : resources_)
    if (r.spec.uri == spec.uri) throw std::invalid_argument("duplicate resource: " + spec.uri);
  if (!spec.read) throw std::invalid_argument("resource " + spec.uri + " has no reader");
  json::Document def(rapidjson::kObjectType);
  auto& a = def.GetAllocator();
  def.AddMember("uri", json::str(spec.uri, a), a);
  def.AddMember("name", json::str(spec.name.empty() ? spec.uri : spec.name, a), a);
  add_optional(def, "title", spec.title, a);
  add_optional(def, "description", spec.description, a);
  add_optional(def, "mimeType", spec.mime_type, a);
  resources_.push_back({std::move(spec), std::move(def)});
}

void Server::add_resource_template(ResourceTemplateSpec spec) {
  for (const ResourceTemplate& t : templates_)
    if (t.spec.uri_template == spec.uri_template)
      throw std::invalid_argument("duplicate resource template: " + spec.uri_template);
  if (!spec.read) throw std::invalid_argument("resource template " + spec.uri_template + " has no reader");
  json::Document def(rapidjson::kObjectType);
  auto& a = def.GetAllocator();
  def.AddMember("uriTemplate", json::str(spec.uri_template, a), a);
  def.AddMember("name", json::str(spec.name.empty() ? spec.uri_template : spec.name, a), a);
  add_optional(def, "title", spec.title, a);
  add_optional(def, "description", spec.description, a);
  add_optional(def, "mimeType", spec.mime_type, a);
  templates_.push_back({std::move(spec), std::move(def)});
}

std::shared_ptr<const Server::Prompt> Server::make_prompt(PromptSpec spec) {
  if (static_cast<bool>(spec.get) == static_cast<bool>(spec.context_get))
    throw std::invalid_argument("prompt " + spec.name + ": give exactly one of get and context_get");
  json::Document def(rapidjson::kObjectType);
  auto& a = def.GetAllocator();
  def.AddMember("name", json::str(spec.name, a), a);
  add_optional(def, "title", spec.title, a);
  add_optional(def, "description", spec.description, a);
  if (!spec.arguments.empty()) {
    json::Value args(rapidjson::kArrayType);
    for (const PromptArgument& arg : spec.arguments) {
      json::Value v(rapidjson::kObjectType);
      v.AddMember("name", json::str(arg.name, a), a);
      add_optional(v, "description", arg.description, a);
      v.AddMember("required", arg.required, a);
      args.PushBack(v, a);
    }
    def.AddMember("arguments", args, a);
  }
  return std::make_shared<const Prompt>(Prompt{std::move(spec), std::move(def)});
}

void Server::add_prompt(PromptSpec spec) {
  auto prompt = make_prompt(std::move(spec));
  util::MutexLock lock(registry_mutex_);
  for (const auto& p : prompts_)
    if (p->spec.name == prompt->spec.name) throw std::invalid_argument("duplicate prompt: " + prompt->spec.name);
  prompts_.push_back(std::move(prompt));
}

void Server::replace_prompt(PromptSpec spec) {
  auto prompt = make_prompt(std::move(spec));
  {
    util::MutexLock lock(registry_mutex_);
    auto it = std::find_if(prompts_.begin(), prompts_.end(),
                           [&](const auto& p) { return p->spec.name == prompt->spec.name; });
    if (it == prompts_.end()) throw std::invalid_argument("replace_prompt: unknown prompt " + prompt->spec.name);
    *it = std::move(prompt);
  }
  notify_list_changed(ListKind::Prompts);
}

std::shared_ptr<const Server::Prompt> Server::find_prompt(std::string_view name) const {
  util::MutexLock lock(registry_mutex_);
  for (const auto& p : prompts_)
    if (p->spec.name == name) return p;
  return nullptr;
}

bool Server::has_prompts() const {
  util::MutexLock lock(registry_mutex_);
  return !prompts_.empty();
}

void Server::set_completion_handler(CompletionHandler handler) { completion_ = std::move(handler); }

}  // namespace mcpgw::examples
