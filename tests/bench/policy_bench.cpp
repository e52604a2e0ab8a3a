// scripts/bench's policies section, in process: what deciding one call
// costs with 20 rules of which 5 match the tool (the first of them decides
// by an expression over the arguments), against no rules; the subject made
// per call as the gateway makes it (server/policies.cpp).
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "catalog/policy.hpp"
#include "config/config.hpp"

using namespace mcpgw;

int main() {
  std::string yaml = "policies:\n";
  for (int i = 1; i <= 15; ++i)
    yaml += "  - {name: other-" + std::to_string(i) + ", match: {tools: [\"other" + std::to_string(i) +
            ":*\", \"tbs:never_" + std::to_string(i) + "\"]}, deny: 'args.x == " + std::to_string(i) + "'}\n";
  for (int i = 1; i <= 5; ++i)
    yaml += "  - {name: echo-" + std::to_string(i) +
            ", match: {tools: [\"tbs:*\", \"tbs:ec*\"], modes: [all], principals: [\"*\"]}, allow: 'size(args.text) < "
            "1000 && !args.text.matches(\"(?i)secret\") && !(\"x\" in args) && mode == \"all\"'}\n";
  auto cfg = config::parse(yaml, "bench.yaml");
  if (!cfg) {
    std::fprintf(stderr, "%s\n", cfg.error().c_str());
    return 1;
  }
  auto args = std::move(*json::parse(R"({"text":"hello"})"));
  std::vector<std::string> slices{"other"};
  catalog::ToolView tool{"tbs:echo", "tbs", "echo", nullptr, slices};
  auto run = [&](std::span<const config::Policy> rules) {
    constexpr int kCalls = 1'000'000;
    int allowed = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) {
      auto who = std::make_shared<catalog::Subject>();
      who->principal = "alice";
      who->mode = "all";
      who->client_name = "bench";
      allowed += catalog::decide(rules, *who, tool, &args).allowed();
    }
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / kCalls;
    if (allowed != kCalls) std::fprintf(stderr, "a call was refused\n");
    return ns;
  };
  double none = run({}), twenty = run(cfg->policies);
  std::printf("decision in process: no rules %.0f ns, 20 rules (5 matching) %.0f ns per call: %+.2f us\n", none, twenty,
              (twenty - none) / 1000);
  return 0;
}
