#include "server/check_redaction.hpp"

#include <algorithm>

#include "redact/detectors.hpp"

namespace mcpgw::server {
namespace {

/// Whether built-in `name` runs under `r`.
bool active(const config::Redact& r, std::string_view name) {
  if (!r.enabled || !r.detectors) return false;
  for (std::size_t i = 0; i < r.detectors->size(); ++i)
    if (!r.detectors->is_pattern(i) && r.detectors->name(i) == name) return true;
  return false;
}

const char* action_name(const config::Redact& r) { return r.action == config::Redact::Action::Refuse ? "refuse" : "mask"; }

}  // namespace

json::Value redaction_json(const config::Redact& r, json::Allocator& a) {
  json::Value out(rapidjson::kObjectType);
  out.AddMember("enabled", r.enabled, a);
  out.AddMember("action", json::str(action_name(r), a), a);
  json::Value in(rapidjson::kArrayType);
  if (r.results) in.PushBack(json::str("results", a), a);
  if (r.arguments) in.PushBack(json::str("arguments", a), a);
  out.AddMember("in", in, a);
  json::Value detectors(rapidjson::kArrayType);
  for (const auto& b : redact::builtins()) {
    json::Value d(rapidjson::kObjectType);
    d.AddMember("name", json::str(b.name, a), a);
    d.AddMember("kind", json::str("builtin", a), a);
    d.AddMember("description", json::str(b.description, a), a);
    d.AddMember("active", active(r, b.name), a);
    detectors.PushBack(d, a);
  }
  for (const auto& p : r.spec.patterns) {
    json::Value d(rapidjson::kObjectType);
    d.AddMember("name", json::str(p.name, a), a);
    d.AddMember("kind", json::str("pattern", a), a);
    d.AddMember("regex", json::str(p.regex, a), a);
    d.AddMember("active", r.enabled, a);
    detectors.PushBack(d, a);
  }
  out.AddMember("detectors", detectors, a);
  return out;
}

void print_redaction(const config::Redact& r, std::ostream& out) {
  out << "\nredaction: ";
  if (r.enabled) {
    std::string in = r.results && r.arguments ? "results, arguments" : r.results ? "results" : r.arguments ? "arguments" : "none";
    out << "on (" << action_name(r) << "; in: " << in << "; audit, logs and spans always)\n";
  } else {
    out << "off (no redact section)\n";
  }
  std::size_t width = 0;
  for (const auto& b : redact::builtins()) width = std::max(width, b.name.size());
  for (const auto& p : r.spec.patterns) width = std::max(width, p.name.size());
  out << "  built-in detectors (* in use):\n";
  for (const auto& b : redact::builtins())
    out << "  " << (active(r, b.name) ? "* " : "  ") << b.name << std::string(width - b.name.size() + 2, ' ')
        << b.description << "\n";
  if (!r.spec.patterns.empty()) out << "  patterns:\n";
  for (const auto& p : r.spec.patterns)
    out << "  * " << p.name << std::string(width - p.name.size() + 2, ' ') << p.regex << "\n";
}

}  // namespace mcpgw::server
