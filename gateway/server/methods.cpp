#include "server/methods.hpp"

#include <algorithm>
#include <array>

#include "mcp/protocol.hpp"

namespace mcpgw::server {

Answer Answer::result(json::Document result) { return Answer(std::move(result), false); }

Answer Answer::empty() { return result(json::Document(rapidjson::kObjectType)); }

Answer Answer::result_with(json::Document result, std::string_view key, std::string raw) {
  Answer out(std::move(result), false);
  out.spliced_ = std::make_unique<Spliced>();
  out.spliced_->raw_key = std::string(key);
  out.spliced_->raw = std::move(raw);
  return out;
}

Answer Answer::error(int code, std::string_view message, const json::Value* data) {
  json::Document e(rapidjson::kObjectType);
  auto& a = e.GetAllocator();
  e.AddMember("code", code, a);
  e.AddMember("message", json::str(message, a), a);
  if (data) e.AddMember("data", json::copy(*data, a), a);
  return Answer(std::move(e), true);
}

int Answer::error_code() const {
  if (!error_) return 0;
  const json::Value* code = body_.IsObject() ? json::find(body_, "code") : nullptr;
  return code && code->IsInt() && code->GetInt() != 0 ? code->GetInt() : jsonrpc::kInternalError;
}

Answer Answer::invalid_params(std::string_view why) {
  return error(jsonrpc::kInvalidParams, "Invalid params: " + std::string(why));
}

Answer Answer::relay(upstream::Reply reply) {
  Answer out(std::move(reply.body), reply.rpc_error);
  out.upstream_session_ = std::move(reply.session);
  out.raw_ = std::move(reply.raw);
  return out;
}

json::Document& Answer::body() {
  if (raw_) {
    upstream::Reply built{false, json::Document(), false, {}, std::move(raw_)};
    built.materialize();
    body_ = std::move(built.body);
  }
  return body_;
}

Answer Answer::page(std::string_view key, std::vector<std::string_view> items, json::Document rest,
                    std::shared_ptr<const void> keep) {
  Answer out(std::move(rest), false);
  out.spliced_ = std::make_unique<Spliced>();
  out.spliced_->page_key = std::string(key);
  out.spliced_->page_items = std::move(items);
  out.spliced_->keep = std::move(keep);
  return out;
}

SplicedText Answer::write(const jsonrpc::Id& id) const {
  if (error_) return jsonrpc::make_error_response(id, body_);
  if (raw_) return jsonrpc::make_result_spliced(id, raw_);
  if (!spliced_) return jsonrpc::make_result(id, body_);
  const Spliced& sp = *spliced_;
  std::string out = "{";
  auto member = [&](std::string_view key, std::string_view value) {
    if (out.size() > 1) out += ',';
    out += json::quote(key);
    out += ':';
    out += value;
  };
  // A page's items first, as listed, then the rest of the result.
  if (!sp.page_key.empty()) {
    std::string items = "[";
    for (std::size_t i = 0; i < sp.page_items.size(); ++i) {
      if (i) items += ',';
      items += sp.page_items[i];
    }
    member(sp.page_key, items + ']');
  }
  for (const auto& m : body_.GetObject())
    member(std::string_view(m.name.GetString(), m.name.GetStringLength()), json::write(m.value));
  if (!sp.raw_key.empty()) member(sp.raw_key, sp.raw);
  out += '}';
  return jsonrpc::make_result_raw(id, out);
}

Settings::Settings(std::shared_ptr<const config::Config> cfg, std::shared_ptr<const saga::Keyring> keyring)
    : cfg_(std::move(cfg)), keyring_(std::move(keyring)) {}

std::shared_ptr<const config::Config> Settings::config() const {
  util::MutexLock lk(mu_);
  return cfg_;
}

std::shared_ptr<const saga::Keyring> Settings::keyring() const {
  util::MutexLock lk(mu_);
  return keyring_;
}

void Settings::set(std::shared_ptr<const config::Config> cfg, std::shared_ptr<const saga::Keyring> keyring) {
  util::MutexLock lk(mu_);
  cfg_ = std::move(cfg);
  keyring_ = std::move(keyring);
}

const json::Value* progress_token(const jsonrpc::Message& m) {
  const json::Value* meta = m.params() ? json::find(*m.params(), "_meta") : nullptr;
  return meta ? json::find(*meta, "progressToken") : nullptr;
}

const json::Value* Request::progress_token() const { return server::progress_token(message); }

namespace {

/// Every request method the gateway answers. initialize and server/discover
/// wait: they call the welcome tool; they and the lists answer from the
/// whole catalog (`whole`). resources/(un)subscribe wait: the first and
/// last subscriber (un)subscribe upstream, as does a listen, which then
/// waits until its client leaves.
constexpr std::array kMethods{
    Method{"initialize", Runs::Async, nullptr, initialize, true, true},
    Method{"server/discover", Runs::Async, nullptr, discover, true, true},
    Method{"ping", Runs::Inline, ping},
    Method{"logging/setLevel", Runs::Inline, set_log_level},
    Method{"tools/list", Runs::Inline, list_tools, nullptr, true, true},
    Method{"tools/call", Runs::Async, nullptr, call_tool},
    Method{"tools/callSaga", Runs::Async, nullptr, call_saga},
    Method{"tools/resumeSaga", Runs::Async, nullptr, resume_saga},
    Method{"resources/list", Runs::Inline, list_resources, nullptr, true, true},
    Method{"resources/templates/list", Runs::Inline, list_resource_templates, nullptr, true, true},
    Method{"resources/read", Runs::Async, nullptr, read_resource},
    Method{"resources/subscribe", Runs::Async, nullptr, subscribe},
    Method{"resources/unsubscribe", Runs::Async, nullptr, unsubscribe},
    Method{"prompts/list", Runs::Inline, list_prompts, nullptr, true, true},
    Method{"prompts/get", Runs::Async, nullptr, get_prompt},
    Method{"completion/complete", Runs::Async, nullptr, complete},
    Method{"skills/list", Runs::Inline, list_skills, nullptr, true, true},
    Method{"skills/get", Runs::Async, nullptr, get_skill},
    Method{"resources/directory/read", Runs::Async, nullptr, read_directory},
    Method{"subscriptions/listen", Runs::Async, nullptr, listen, false},
    Method{"tasks/get", Runs::Async, nullptr, get_task},
    Method{"tasks/result", Runs::Async, nullptr, task_result},
    Method{"tasks/list", Runs::Async, nullptr, list_tasks},
    Method{"tasks/cancel", Runs::Async, nullptr, cancel_task},
    Method{"tasks/update", Runs::Async, nullptr, update_task},
};

struct Notification {
  std::string_view name;
  NotificationHandler handler;
};

constexpr std::array kNotifications{
    Notification{"notifications/initialized", on_initialized},
    Notification{"notifications/cancelled", on_cancelled},
};

}  // namespace

const Method* find_method(std::string_view name) {
  for (const auto& m : kMethods)
    if (m.name == name) return &m;
  return nullptr;
}

NotificationHandler find_notification(std::string_view name) {
  for (const auto& n : kNotifications)
    if (n.name == name) return n.handler;
  return nullptr;
}

Answer page_of(Request& r, std::string_view key, std::size_t count,
               const std::function<std::string_view(std::size_t)>& defs, std::size_t page_size,
               std::shared_ptr<const void> keep) {
  std::size_t offset = 0;
  if (const json::Value* p = r.params(); p && p->IsObject()) {
    if (const json::Value* c = json::find(*p, "cursor"); c && !c->IsNull()) {
      auto off = c->IsString() ? mcp::decode_cursor(c->GetString()) : std::nullopt;
      if (!off) return Answer::invalid_params("invalid cursor");
      offset = *off;
    }
  }
  std::size_t end = std::min(count, offset + page_size);
  std::vector<std::string_view> items;
  for (std::size_t i = offset; i < end; ++i) items.push_back(defs(i));
  json::Document rest(rapidjson::kObjectType);
  if (end < count) rest.AddMember("nextCursor", json::str(mcp::encode_cursor(end), rest.GetAllocator()), rest.GetAllocator());
  return Answer::page(key, std::move(items), std::move(rest), std::move(keep));
}

Task<std::shared_ptr<const catalog::Snapshot>> after_startup(Services& sv, Request& r) {
  co_return co_await sv.catalog.started(std::chrono::steady_clock::time_point::max(),
                                        r.exchange ? &r.exchange->cancel_signal() : nullptr);
}

upstream::Caller caller_of(const McpSession& s) {
  return {s.context().principal, s.mode(), s.context().stateless ? std::string() : s.id(), s.context().forward_headers,
          s.protocol_version(), s.subject_token()};
}

void strip_client_state(json::Value& params) {
  params.RemoveMember("inputResponses");
  params.RemoveMember("requestState");
  if (json::Value* meta = json::find(params, "_meta"); meta && meta->IsObject()) {
    for (auto it = meta->MemberBegin(); it != meta->MemberEnd();) {
      std::string_view key(it->name.GetString(), it->name.GetStringLength());
      if (key.rfind("io.modelcontextprotocol/", 0) == 0) it = meta->EraseMember(it);
      else ++it;
    }
  }
}

}  // namespace mcpgw::server
