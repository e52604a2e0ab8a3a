// skills-server: serves a few Agent Skills over MCP (the Skills extension,
// SEP-2640, `io.modelcontextprotocol/skills` with directoryRead): every
// file of a skill is a `skill://<skill-path>/<file>` resource, skills/list
// pages through the skills' manifests (sha256 digest and size of every
// file), skills/get returns one, resources/directory/read lists a
// directory's direct children. The conformance suite's sep-2640-* server
// scenarios run against it (scripts/conformance), directly and through mcpgw.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "jsonrpc/message.hpp"
#include "mcp/resource_refs.hpp"
#include "server_kit.hpp"
#include "util/hex.hpp"

namespace ex = mcpgw::examples;
namespace json = mcpgw::json;

namespace {

constexpr std::string_view kScheme = "skill://";
constexpr std::string_view kDirectoryMime = "inode/directory";
/// skills/list answers this many entries a page, so clients (and the
/// gateway) page through it.
constexpr std::size_t kPageSize = 2;

struct File {
  std::string path;  ///< relative to the skill's root
  std::string mime;
  std::string text;
};

struct Skill {
  std::string path;  ///< <skill-path>: its last segment is the name
  std::string name, description;
  std::vector<File> files;  ///< SKILL.md first
};

Skill make_skill(std::string path, std::string description, std::string body, std::vector<File> more) {
  std::string name = path.substr(path.rfind('/') + 1);
  Skill s{path, name, description, {}};
  s.files.push_back({"SKILL.md", "text/markdown",
                     "---\nname: " + name + "\ndescription: " + description + "\n---\n\n" + body});
  for (auto& f : more) s.files.push_back(std::move(f));
  return s;
}

const std::vector<Skill>& skills() {
  static const std::vector<Skill> all = {
      make_skill("pdf-processing", "Extract, fill, and assemble PDF documents",
                 "# PDF processing\n\nFill forms per references/FORMS.md; pick a template from templates/.\n",
                 {{"references/FORMS.md", "text/markdown", "# Forms\n\nEvery field is filled left to right.\n"},
                  {"templates/invoice.md", "text/markdown", "# Invoice\n\nNumber, date, lines, total.\n"},
                  {"templates/regional/eu-invoice.md", "text/markdown", "# EU invoice\n\nAdd the VAT number.\n"},
                  {"scripts/extract.py", "text/x-python", "print('extract')\n"}}),
      make_skill("git-workflow", "Follow this team's Git conventions for branching and commits",
                 "# Git workflow\n\nOne branch per issue; commit messages say what and why.\n", {}),
      make_skill("acme/billing/refunds", "Process customer refund requests per company policy",
                 "# Refunds\n\nReply with examples/email.md once approved.\n",
                 {{"examples/email.md", "text/markdown", "Dear customer, your refund is on its way.\n"}}),
  };
  return all;
}

std::string uri_of(const Skill& s, std::string_view file) {
  return std::string(kScheme) + s.path + (file.empty() ? "" : "/" + std::string(file));
}

json::Value entry_of(const Skill& s, json::Allocator& a) {
  json::Value e(rapidjson::kObjectType);
  e.AddMember("uri", json::str(uri_of(s, "SKILL.md"), a), a);
  json::Value fm(rapidjson::kObjectType);
  fm.AddMember("name", json::str(s.name, a), a);
  fm.AddMember("description", json::str(s.description, a), a);
  e.AddMember("frontmatter", fm, a);
  json::Value resources(rapidjson::kArrayType);
  for (const auto& f : s.files) {
    json::Value r(rapidjson::kObjectType);
    r.AddMember("uri", json::str(uri_of(s, f.path), a), a);
    r.AddMember("digest", json::str("sha256:" + mcpgw::sha256_hex(f.text), a), a);
    r.AddMember("size", static_cast<std::uint64_t>(f.text.size()), a);
    resources.PushBack(r, a);
  }
  e.AddMember("resources", resources, a);
  return e;
}

/// Results of the 2026-07-28 revision carry its caching hints.
void cacheable(json::Document& r, bool stateless) {
  if (!stateless) return;
  r.AddMember("ttlMs", 0, r.GetAllocator());
  r.AddMember("cacheScope", "public", r.GetAllocator());
}

ex::RpcError invalid(std::string message) { return {mcpgw::jsonrpc::kInvalidParams, std::move(message)}; }

ex::Outcome list_skills(const json::Value* params, bool stateless) {
  std::size_t start = 0;
  if (auto cursor = params ? json::get_string(*params, "cursor") : std::nullopt) {
    if (*cursor != "2") return invalid("invalid cursor");
    start = kPageSize;
  }
  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (std::size_t i = start; i < skills().size() && i < start + kPageSize; ++i) list.PushBack(entry_of(skills()[i], a), a);
  r.AddMember("skills", list, a);
  if (start + kPageSize < skills().size()) r.AddMember("nextCursor", json::str(std::to_string(start + kPageSize), a), a);
  cacheable(r, stateless);
  return r;
}

ex::Outcome get_skill(const json::Value* params, bool stateless) {
  auto uri = params ? json::get_string(*params, "uri") : std::nullopt;
  if (!uri) return invalid("uri must be a string");
  for (const auto& s : skills())
    if (*uri == uri_of(s, "SKILL.md")) {
      json::Document r(rapidjson::kObjectType);
      r.AddMember("skill", entry_of(s, r.GetAllocator()), r.GetAllocator());
      cacheable(r, stateless);
      return r;
    }
  return invalid("not a skill of this server: " + std::string(*uri));
}

/// The direct children of directory `dir` (a skill root or one of its
/// subdirectories, without trailing slash): files and subdirectories.
std::optional<std::map<std::string, const File*>> children(std::string_view dir) {
  for (const auto& s : skills()) {
    std::string root = uri_of(s, "");
    if (dir != root && dir.substr(0, root.size() + 1) != root + "/") continue;
    std::string rel = dir.size() > root.size() ? std::string(dir.substr(root.size() + 1)) + "/" : "";
    std::map<std::string, const File*> out;  // child name -> file, or null for a directory
    for (const auto& f : s.files) {
      if (f.path.substr(0, rel.size()) != rel) continue;
      std::string rest = f.path.substr(rel.size());
      auto slash = rest.find('/');
      if (slash == std::string::npos) out[rest] = &f;
      else out.emplace(rest.substr(0, slash), nullptr);
    }
    if (!out.empty()) return out;
  }
  return std::nullopt;
}

ex::Outcome read_directory(const json::Value* params, bool) {
  auto uri = params ? json::get_string(*params, "uri") : std::nullopt;
  if (!uri) return invalid("uri must be a string");
  auto found = children(*uri);
  if (!found) return invalid("not a directory resource: " + std::string(*uri));
  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (const auto& [name, file] : *found) {
    json::Value item(rapidjson::kObjectType);
    item.AddMember("uri", json::str(std::string(*uri) + "/" + name, a), a);
    item.AddMember("name", json::str(name, a), a);
    item.AddMember("mimeType", json::str(file ? file->mime : std::string(kDirectoryMime), a), a);
    list.PushBack(item, a);
  }
  r.AddMember("resources", list, a);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  ex::Server server("skills-server", "0.1.0");
  server.set_instructions("Skills are listed by skills/list; start with skill://pdf-processing/SKILL.md.");
  server.set_extension(std::string(mcpgw::mcp::kSkillsExtension), R"({"directoryRead": true})");
  for (const auto& s : skills())
    for (const auto& f : s.files) {
      bool manifest = f.path == "SKILL.md";
      std::string uri = uri_of(s, f.path);
      server.add_resource({.uri = uri,
                           .name = manifest ? s.name : f.path,
                           .description = manifest ? s.description : "",
                           .mime_type = f.mime,
                           .read = [uri, &f](std::string_view) -> ex::Outcome {
                             json::Document r(rapidjson::kObjectType);
                             auto& a = r.GetAllocator();
                             json::Value c(rapidjson::kObjectType);
                             c.AddMember("uri", json::str(uri, a), a);
                             c.AddMember("mimeType", json::str(f.mime, a), a);
                             c.AddMember("text", json::str(f.text, a), a);
                             json::Value contents(rapidjson::kArrayType);
                             contents.PushBack(c, a);
                             r.AddMember("contents", contents, a);
                             return r;
                           }});
    }
  server.add_method("skills/list", list_skills);
  server.add_method("skills/get", get_skill);
  server.add_method("resources/directory/read", read_directory);
  return ex::run_main(server, argc, argv);
}
