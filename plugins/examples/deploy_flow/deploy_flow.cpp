// deploy_flow: seed 004's deployment saga as one composite tool.
//
//   deploy {service, version}
//     round 1  asks the user for the target (elicitation: staging|production)
//     round 2  asks the client's model whether deploying there is safe (sampling)
//     round 3  acts: one upstream call (`echo` of the configured server stands
//              in for the real deployment) and a structured result
//
// The handler is stateless, as plugin.h asks: the gateway runs it again from
// the top after every round with all the answers so far, possibly in another
// gateway process after a restart. So it never remembers anything itself; it
// derives where it is from which answers exist, and it acts only once every
// answer is in (nothing irreversible before the last question).
//
// Config: {"server": "toolbox"} names the upstream whose `echo` is called.
#include <mcpgw/plugin.hpp>

#include <cctype>
#include <string>

namespace {

using mcpgw::Input;
using mcpgw::Json;
using mcpgw::ToolResult;

const char* const kTargetSchema = R"json({
  "type": "object",
  "properties": {"target": {"type": "string", "title": "Deployment target", "enum": ["staging", "production"]}},
  "required": ["target"]
})json";

/// The text a CreateMessageResult carries (one content block, or several).
std::string sampled_text(const Json& result) {
  const Json& content = result["content"];
  if (content.is_object()) return content["text"].as_string();
  std::string out;
  for (const auto& block : content.items())
    if (block["type"].as_string() == "text") out += block["text"].as_string();
  return out;
}

/// The model's verdict: its first word, upper-cased ("SAFE", "UNSAFE", or
/// anything else a model may say).
std::string verdict_of(const std::string& text) {
  std::string word;
  for (char c : text) {
    if (std::isalpha(static_cast<unsigned char>(c))) word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    else if (!word.empty()) break;
  }
  return word;
}

/// Why an answer cannot be acted on: the user's decline or cancel of an
/// elicitation, or the client's error (it could not ask at all).
std::string why_not(const Json& answer) {
  if (const Json* error = answer.find("error")) return "the client could not ask: " + (*error)["message"].as_string();
  const std::string action = answer["action"].as_string();
  if (action == "decline") return "the user declined";
  if (action == "cancel") return "the user cancelled";
  return "no usable answer";
}

}  // namespace

MCPGW_PLUGIN("deploy_flow", "1.0.0") {
  const std::string server = plugin.config()["server"].as_string("toolbox");
  plugin.tool("deploy")
      .title("Deploy")
      .description("Deploys a service version: asks the user for the target, asks the client's model for a safety "
                   "check, then deploys (through the " + server + " server).")
      .input_schema(Json::parse(R"json({
        "type": "object",
        "properties": {"service": {"type": "string"}, "version": {"type": "string"}},
        "required": ["service", "version"],
        "additionalProperties": false
      })json"))
      .output_schema(Json::parse(R"json({
        "type": "object",
        "properties": {"service": {"type": "string"}, "version": {"type": "string"}, "target": {"type": "string"},
                       "safety": {"type": "string"}, "deployed": {"type": "boolean"}},
        "required": ["service", "version", "target", "safety", "deployed"]
      })json"))
      .annotations(Json::object({{"destructiveHint", true}}))
      .slices({"deploy"})  // its own slice: destructiveHint alone would file it under "delete"
      .handler([server](mcpgw::Context& ctx, const Json& args) {
        const std::string service = args["service"].as_string(), version = args["version"].as_string();
        if (service.empty() || version.empty()) return ToolResult::error("deploy needs a service and a version");

        // Round 1: where to? Only the user can say.
        if (!ctx.has_answer("target"))
          return ToolResult::ask(Input::elicit("target", "Where should " + service + " " + version + " be deployed?",
                                               Json::parse(kTargetSchema)));
        const auto chosen = ctx.accepted("target");
        if (!chosen)
          return ToolResult::error("Not deployed: no deployment target (" + why_not(ctx.answer("target")) + ").");
        const std::string target = (*chosen)["target"].as_string();
        // The client checks the schema, but the answer comes from outside:
        // check it again before acting on it.
        if (target != "staging" && target != "production")
          return ToolResult::error("Not deployed: \"" + target + "\" is not a deployment target.");

        // Round 2: a second opinion from the client's model. The prompt is
        // rebuilt from the arguments and round 1's answer on every run, so a
        // replay asks (and matches) the same question.
        if (!ctx.has_answer("safety"))
          return ToolResult::ask(Input::sample("safety",
                                               "Is it safe to deploy " + service + " " + version + " to " + target +
                                                   "? Answer SAFE or UNSAFE and why.",
                                               200));
        const Json check = ctx.answer("safety");
        if (check.contains("error")) return ToolResult::error("Not deployed: no safety check (" + why_not(check) + ").");
        const std::string safety = sampled_text(check);
        // Fail closed: only an explicit SAFE lets the deployment go ahead.
        if (verdict_of(safety) != "SAFE")
          return ToolResult::error("Not deployed: the safety check did not say SAFE: " + safety);

        // Round 3: every answer is in; act, once.
        auto done = ctx.call_tool(server, "echo",
                                  Json::object({{"text", "deploy " + service + " " + version + " to " + target}}));
        if (done.is_error()) return ToolResult::error("Deployment failed: " + done.text());
        return ToolResult::ok(Json::object({{"service", service},
                                            {"version", version},
                                            {"target", target},
                                            {"safety", safety},
                                            {"deployed", true}}),
                              "Deployed " + service + " " + version + " to " + target + ".");
      });
}
