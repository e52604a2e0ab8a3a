#pragma once
// Hidden instructions: text in a tool definition that addresses the model
// about other tools, files, credentials or the user rather than describing
// the tool. A small rule set, each rule with an id that `mcpgw check`, the
// logs and the audit name (docs/operations.md, "Tool integrity"):
//
//   markup        tags that mark text for the model: <IMPORTANT>, <SYSTEM>,
//                 <instructions>, [INST], <|im_start|>
//   override      "ignore / disregard / forget previous (above, prior) instructions"
//   conceal       "do not tell (mention, reveal) ... the user", "without telling the user"
//   credential    credential files: ~/.ssh, id_rsa, .env, mcp.json,
//                 .aws/credentials, .netrc, .git-credentials, /etc/shadow ...
//   other-tool    the name of another server's tool (shadowing it)
//   base64-blob   a base64 run of 80 characters or more
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "jsonrpc/json.hpp"

namespace mcpgw::integrity {

/// Distinctive tool names (Scanner::distinctive), upstream and exposed,
/// and the servers that have them.
using ToolOwners = std::unordered_map<std::string, std::vector<std::string>>;

/// One rule that matched.
struct Finding {
  std::string rule;     ///< the rule's id
  std::string where;    ///< "description", "inputSchema.properties.sidenote.description", ...
  std::string excerpt;  ///< the matching text, at most about 80 characters
};

/// The rule ids, in the order above.
const std::vector<std::string>& rule_ids();

/// The rules, compiled once; scanning is read-only and thread-safe.
class Scanner {
 public:
  Scanner();
  ~Scanner();
  Scanner(const Scanner&) = delete;
  Scanner& operator=(const Scanner&) = delete;

  /// Every finding in the strings of `tool` the model reads: its title and
  /// description, annotations.title, and every key and string at any depth
  /// of its input and output schemas (property names and descriptions,
  /// enum values, defaults, examples). A name of `owners` that a server
  /// other than `server` has is another server's tool.
  std::vector<Finding> scan(const json::Value& tool, const ToolOwners& owners, std::string_view server) const;

  /// Whether a tool name is distinctive enough to be looked for in text:
  /// five characters or more with a separator (_ - . :) or an inner capital
  /// (send_email, sendEmail), never a plain word (add, search).
  static bool distinctive(std::string_view name);

 private:
  struct Rules;
  std::unique_ptr<Rules> rules_;
};

/// "rule at where: excerpt", as logs and the audit write a finding.
std::string describe(const Finding& f);

}  // namespace mcpgw::integrity
