#include "integrity/pins.hpp"

#include "integrity/definition.hpp"

namespace mcpgw::integrity {
namespace {

std::optional<Version> version_from_json(const json::Value* v) {
  if (!v || !v->IsObject()) return std::nullopt;
  Version out;
  out.digest = std::string(json::get_string(*v, "digest").value_or(""));
  if (const json::Value* d = json::find(*v, "definition")) out.definition = json::write(*d);
  if (const json::Value* at = json::find(*v, "at"); at && at->IsInt64()) out.at_ms = at->GetInt64();
  out.how = std::string(json::get_string(*v, "how").value_or(""));
  return out;
}

json::Value version_to_json(const Version& v, json::Allocator& a) {
  json::Value out(rapidjson::kObjectType);
  out.AddMember("digest", json::str(v.digest, a), a);
  auto parsed = json::parse(v.definition);
  out.AddMember("definition", parsed ? json::copy(*parsed, a) : json::Value(rapidjson::kObjectType), a);
  out.AddMember("at", json::Value(static_cast<std::int64_t>(v.at_ms)), a);
  if (!v.how.empty()) out.AddMember("how", json::str(v.how, a), a);
  return out;
}

std::vector<std::string> strings_of(const json::Value* v) {
  std::vector<std::string> out;
  if (v && v->IsArray())
    for (const auto& s : v->GetArray())
      if (s.IsString()) out.emplace_back(s.GetString(), s.GetStringLength());
  return out;
}

json::Value strings_to_json(const std::vector<std::string>& items, json::Allocator& a) {
  json::Value out(rapidjson::kArrayType);
  for (const auto& s : items) out.PushBack(json::str(s, a), a);
  return out;
}

}  // namespace

std::string_view name_of(State s) {
  switch (s) {
    case State::Pinned: return "pinned";
    case State::Changed: return "changed";
    case State::New: return "new";
  }
  return "pinned";
}

Record record_from_json(const json::Value& v) {
  Record r;
  if (!v.IsObject()) return r;
  r.pin = version_from_json(json::find(v, "pin"));
  r.seen = version_from_json(json::find(v, "seen"));
  r.changes = strings_of(json::find(v, "changes"));
  r.findings = strings_of(json::find(v, "findings"));
  return r;
}

json::Value record_to_json(const Record& r, json::Allocator& a) {
  json::Value out(rapidjson::kObjectType);
  if (r.pin) out.AddMember("pin", version_to_json(*r.pin, a), a);
  if (r.seen) out.AddMember("seen", version_to_json(*r.seen, a), a);
  if (!r.changes.empty()) out.AddMember("changes", strings_to_json(r.changes, a), a);
  if (!r.findings.empty()) out.AddMember("findings", strings_to_json(r.findings, a), a);
  return out;
}

const Record* Ledger::find(const std::string& server, const std::string& tool) const {
  auto s = servers.find(server);
  if (s == servers.end()) return nullptr;
  auto t = s->second.find(tool);
  return t == s->second.end() ? nullptr : &t->second;
}

bool Ledger::pinned(const std::string& server) const {
  auto s = servers.find(server);
  if (s == servers.end()) return false;
  for (const auto& [name, r] : s->second)
    if (r.pin) return true;
  return false;
}

std::string write_ledger(const Ledger& l) {
  json::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("version", 1, a);
  json::Value servers(rapidjson::kObjectType);
  for (const auto& [server, tools] : l.servers) {
    json::Value t(rapidjson::kObjectType);
    for (const auto& [name, record] : tools) t.AddMember(json::str(name, a), record_to_json(record, a), a);
    servers.AddMember(json::str(server, a), t, a);
  }
  d.AddMember("servers", servers, a);
  return json::write(d) + "\n";
}

Result<Ledger> parse_ledger(std::string_view text) {
  Ledger l;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return l;
  auto d = json::parse(text);
  if (!d) return Error{"not JSON: " + d.error()};
  if (!d->IsObject()) return Error{"expected a JSON object"};
  const json::Value* version = json::find(*d, "version");
  if (!version || !version->IsInt() || version->GetInt() != 1) return Error{"expected \"version\": 1"};
  const json::Value* servers = json::find(*d, "servers");
  if (!servers || !servers->IsObject()) return Error{"expected \"servers\": an object"};
  for (const auto& s : servers->GetObject()) {
    if (!s.value.IsObject()) return Error{"server " + std::string(s.name.GetString()) + ": expected an object"};
    auto& tools = l.servers[std::string(s.name.GetString(), s.name.GetStringLength())];
    for (const auto& t : s.value.GetObject())
      tools[std::string(t.name.GetString(), t.name.GetStringLength())] = record_from_json(t.value);
  }
  return l;
}

void apply_changes(Ledger& l, const std::vector<Change>& changes) {
  for (const auto& c : changes) l.servers[c.server][c.tool] = c.record;
}

Result<std::vector<Change>> approve(const Ledger& l, const Selection& sel, std::int64_t now_ms) {
  std::vector<Change> out;
  auto take = [&](const std::string& server, const std::string& tool, const Record& r) {
    if (!r.seen) return;
    Change c{server, tool, {}};
    c.record.pin = r.seen;
    c.record.pin->at_ms = now_ms;
    c.record.pin->how = "approved";
    out.push_back(std::move(c));
  };
  if (!sel.server.empty() && !l.servers.count(sel.server))
    return Error{"no tool of server " + sel.server + " has been seen (mcpgw pins list shows what has)"};
  for (const auto& name : sel.names) {
    bool found = false;
    for (const auto& [server, tools] : l.servers)
      if (auto it = tools.find(name); it != tools.end()) {
        found = true;
        take(server, name, it->second);
      }
    if (!found) return Error{"no tool named " + name + " has been seen (mcpgw pins list shows what has)"};
  }
  for (const auto& [server, tools] : l.servers)
    if (sel.all || server == sel.server)
      for (const auto& [tool, r] : tools) take(server, tool, r);
  return out;
}

std::string ToolReport::refusal() const {
  std::string why;
  if (state == State::Changed) why = "its definition changed since it was pinned";
  else if (findings.empty()) why = "it is new on a server whose tools are pinned";
  if (!findings.empty())
    why += std::string(why.empty() ? "" : ", and ") + "its definition may hold hidden instructions (rule " +
           findings.front().rule + ")";
  return "mcpgw: tool " + tool + " is withheld by integrity.pins: " + why + "; an operator accepts it with `mcpgw pins approve " + tool + "`";
}

Judge::Judge(Mode mode, std::shared_ptr<const Ledger> ledger, std::string why, std::int64_t now_ms,
             const Scanner& scanner, const ToolOwners& owners, bool provisional)
    : mode_(mode),
      ledger_(std::move(ledger)),
      why_(std::move(why)),
      now_(now_ms),
      scanner_(scanner),
      owners_(owners),
      provisional_(provisional) {}

ToolReport Judge::judge(const std::string& server, const std::string& tool, const json::Value& def) {
  ToolReport out;
  out.server = server;
  out.tool = tool;
  std::string canon = canonical(def);
  out.digest = digest(canon);
  if (!ledger_) {
    out.state = State::New;
    out.withheld = mode_ == Mode::Block;
    out.changes.push_back("the pins are not loaded: " + why_);
    return out;
  }
  const Record* old = ledger_->find(server, tool);
  // Its pin. A change seen (here before, or by another replica whose server
  // lists another definition) stays in the record until an operator
  // approves or it is seen again.
  if (old && old->pin && old->pin->digest == out.digest) return out;
  out.findings = scanner_.scan(def, owners_, server);
  Record next;
  if (!old && !ledger_->pinned(server) && out.findings.empty()) {
    if (provisional_) return out;
    next.pin = Version{out.digest, std::move(canon), now_, "first sight"};
    changes_.push_back({server, tool, std::move(next)});
    return out;
  }
  out.state = old && old->pin ? State::Changed : State::New;
  out.withheld = mode_ == Mode::Block;
  if (out.state == State::Changed) {
    auto before = json::parse(old->pin->definition);
    if (before) out.changes = diff(*before, def);
    if (out.changes.empty()) out.changes.push_back("definition");
  }
  const bool same_seen = old && old->seen && old->seen->digest == out.digest;
  // What a new tool was when first seen stays what it is called.
  if (out.state == State::New) {
    if (same_seen && !old->changes.empty()) out.changes = old->changes;
    else out.changes.push_back(ledger_->pinned(server) ? "new tool" : "first sight");
  }
  if (old) next.pin = old->pin;
  next.seen = Version{out.digest, std::move(canon), same_seen ? old->seen->at_ms : now_, ""};
  next.changes = out.changes;
  for (const auto& f : out.findings) next.findings.push_back(describe(f));
  if (!old || !(*old == next)) changes_.push_back({server, tool, std::move(next)});
  return out;
}

}  // namespace mcpgw::integrity
