#include "integrity/hidden.hpp"

#include <re2/re2.h>

#include <cctype>
#include <optional>

namespace mcpgw::integrity {

struct Scanner::Rules {
  struct Rule {
    std::string id;
    RE2 re;
    Rule(std::string i, const char* pattern) : id(std::move(i)), re(pattern, options()) {}
    static RE2::Options options() {
      RE2::Options o;
      o.set_case_sensitive(false);
      o.set_log_errors(false);
      return o;
    }
  };
  // In rule_ids() order; other-tool is not a pattern.
  Rule rules[5] = {
      {"markup",
       R"((<\s*/?\s*(important|system|instructions?|secret|hidden|admin|assistant|context|override)\b[^>]{0,40}>)|\[/?INST\]|<\|im_start\|>|<\|system\|>)"},
      {"override",
       R"(\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+)?(previous|prior|above|earlier|preceding|other|original|system)\s+(instructions?|prompts?|rules|directions|guidelines|messages))"},
      {"conceal",
       R"(\b(do\s+not|don'?t|never|must\s+not|should\s+not)\s+(\w+\s+){0,2}(tell|mention|inform|reveal|notify|show|disclose|alert|say)\b[^.\n]{0,80}\b(the\s+)?users?\b|\bwithout\s+(telling|informing|notifying|alerting|asking)\s+the\s+user|\b(the\s+)?user\s+(must|should)\s+not\s+(know|see|notice|be\s+told))"},
      {"credential",
       R"((~|\$home|%userprofile%)[/\\]\.\w|[/\\~]\.ssh\b|\.ssh[/\\]|\bid_(rsa|dsa|ecdsa|ed25519)\b|(^|[\s/\\'"`(])\.env\b|\bmcp\.json\b|\.aws[/\\]credentials|\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials|/etc/(passwd|shadow)\b|\.kube[/\\]config|\.docker[/\\]config\.json|\bprivate[\s_-]?keys?\b)"},
      {"base64-blob", R"([A-Za-z0-9+/]{80,}={0,2})"},
  };
};

const std::vector<std::string>& rule_ids() {
  static const std::vector<std::string> ids{"markup", "override", "conceal", "credential", "other-tool", "base64-blob"};
  return ids;
}

Scanner::Scanner() : rules_(std::make_unique<Rules>()) {}
Scanner::~Scanner() = default;

bool Scanner::distinctive(std::string_view name) {
  if (name.size() < 5) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '_' || c == '-' || c == '.' || c == ':') return i > 0 && i + 1 < name.size();
    if (i > 0 && std::isupper(static_cast<unsigned char>(c)) && std::islower(static_cast<unsigned char>(name[i - 1])))
      return true;
  }
  return false;
}

namespace {

std::string excerpt_of(std::string_view text, std::string_view match) {
  std::size_t at = static_cast<std::size_t>(match.data() - text.data());
  std::size_t from = at > 20 ? at - 20 : 0;
  std::size_t to = std::min(text.size(), at + std::min<std::size_t>(match.size(), 60) + 20);
  // Whole UTF-8 characters only.
  while (from > 0 && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) --from;
  while (to < text.size() && (static_cast<unsigned char>(text[to]) & 0xC0) == 0x80) ++to;
  std::string out(text.substr(from, to - from));
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return (from > 0 ? "..." : "") + out + (to < text.size() ? "..." : "");
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':'; }

/// The first distinctive name of `names` that `text` mentions as a word or
/// as the end of one (mcp_tool_send_email mentions send_email).
std::optional<std::string_view> mentioned(std::string_view text, const ToolOwners& names, std::string_view server) {
  std::size_t i = 0;
  std::string word;
  while (i < text.size()) {
    while (i < text.size() && !word_char(text[i])) ++i;
    std::size_t start = i;
    while (i < text.size() && word_char(text[i])) ++i;
    std::string_view w = text.substr(start, i - start);
    while (!w.empty() && (w.back() == '.' || w.back() == ':' || w.back() == '-')) w.remove_suffix(1);
    if (w.size() < 5) continue;
    for (std::size_t from = 0; from < w.size();) {
      word.assign(w.substr(from));
      if (auto it = names.find(word); it != names.end())
        for (const auto& owner : it->second)
          if (owner != server) return text.substr(start + from, w.size() - from);
      auto next = w.find_first_of("_.:", from);
      if (next == std::string_view::npos) break;
      from = next + 1;
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<Finding> Scanner::scan(const json::Value& tool, const ToolOwners& owners, std::string_view server) const {
  std::vector<Finding> out;
  auto check = [&](std::string_view text, const std::string& where) {
    for (const auto& rule : rules_->rules) {
      re2::StringPiece piece(text.data(), text.size()), match;
      if (rule.re.Match(piece, 0, piece.size(), RE2::UNANCHORED, &match, 1))
        out.push_back({rule.id, where, excerpt_of(text, std::string_view(match.data(), match.size()))});
    }
    if (!owners.empty())
      if (auto name = mentioned(text, owners, server)) out.push_back({"other-tool", where, excerpt_of(text, *name)});
  };
  auto walk = [&](auto& self, const json::Value& v, const std::string& where) -> void {
    if (v.IsString()) {
      check(std::string_view(v.GetString(), v.GetStringLength()), where);
    } else if (v.IsObject()) {
      for (const auto& m : v.GetObject()) {
        std::string key(m.name.GetString(), m.name.GetStringLength());
        std::string at = where + "." + key;
        check(key, at + " (key)");
        self(self, m.value, at);
      }
    } else if (v.IsArray()) {
      std::size_t i = 0;
      for (const auto& item : v.GetArray()) self(self, item, where + "[" + std::to_string(i++) + "]");
    }
  };
  if (!tool.IsObject()) return out;
  for (const char* key : {"title", "description"})
    if (auto s = json::get_string(tool, key)) check(*s, key);
  if (const json::Value* ann = json::find(tool, "annotations"))
    if (auto s = json::get_string(*ann, "title")) check(*s, "annotations.title");
  for (const char* key : {"inputSchema", "outputSchema"})
    if (const json::Value* schema = json::find(tool, key)) walk(walk, *schema, key);
  return out;
}

std::string describe(const Finding& f) { return f.rule + " at " + f.where + ": " + f.excerpt; }

}  // namespace mcpgw::integrity
