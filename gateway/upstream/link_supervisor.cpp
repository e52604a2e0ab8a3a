// A link's supervisor: connecting (a child process or an HTTP session),
// the revision probe and initialize, listing every page, waiting for the
// connection to die or a list to change, and reconnecting with backoff.
// All of it a coroutine on the loop: no thread per upstream.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "mcp/era.hpp"
#include "mcp/protocol.hpp"
#include "mcp/resource_refs.hpp"
#include "mcp/tasks.hpp"
#include "transport/http_connection.hpp"
#include "transport/stdio_connection.hpp"
#include "upstream/credential.hpp"
#include "upstream/link.hpp"

namespace mcpgw::upstream {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kMaxPages = 1000;

/// What the gateway's clients can do, in the union: a request a calling
/// client did not declare gets an error from the gateway instead (and a
/// task-augmented one goes as an ordinary request to a client that runs
/// no tasks). The extensions are the ones the gateway passes through (it
/// exposes their resources under the server's name), so app servers
/// register their UI tools on a shared connection.
constexpr std::string_view kClientCaps =
    R"({"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{},)"
    R"("tasks":{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}},)"
    R"("extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]},)"
    R"("io.modelcontextprotocol/skills":{}}})";

}  // namespace

json::Document Link::own_capabilities() const {
  auto caps = json::parse(kClientCaps);
  // A client's own link declares the extensions that client declared.
  if (role_ == Role::Client) {
    caps->RemoveMember("extensions");
    if (client_extensions_.IsObject() && !client_extensions_.ObjectEmpty())
      caps->AddMember("extensions", json::copy(client_extensions_, caps->GetAllocator()), caps->GetAllocator());
  }
  return std::move(*caps);
}

Task<bool> Link::wait_backoff(std::chrono::milliseconds d) {
  std::function<bool()> stopping = [this]() REQUIRES(mu_) { return stopping_; };
  bool stopped = co_await wait_until(stopping, Clock::now() + d);
  co_return !stopped;
}

Result<std::shared_ptr<transport::Connection>> Link::connect() {
  transport::ConnectionHandlers h;
  h.on_message = [this](jsonrpc::Message& m) { on_message(m); };
  h.on_close = [this](const std::string& reason) {
    {
      util::MutexLock lk(mu_);
      conn_dead_ = true;
      status_ = reason;
      state_ = State::Down;
      note_trouble_locked(reason);
    }
    ready_.store(false);
    if (role_ == Role::Shared) listener_.on_health(cfg_.name, false);
    spdlog::warn("upstream {}: {}", cfg_.name, reason);
    changed_.notify();
  };
  if (cfg_.transport == config::Server::Transport::Http) {
    transport::HttpTarget target{cfg_.name, cfg_.url, cfg_.headers, {cfg_.tls.ca_file, cfg_.tls.verify},
                                 cfg_.max_response_bytes, oauth_ ? credential_for(oauth_, principal_) : nullptr};
    auto c = transport::HttpConnection::create(io_, std::move(target), std::move(h));
    if (!c) return Error{c.error()};
    return std::shared_ptr<transport::Connection>(std::move(*c));
  }
  h.log_text = [this](std::string_view text) { return listener_.log_text(text); };
  transport::ChildSpec spec{cfg_.command, cfg_.args, cfg_.env, cfg_.cwd};
  auto c = transport::StdioConnection::start(io_, cfg_.name, spec, std::move(h), cfg_.max_response_bytes);
  if (!c) return Error{c.error()};
  pid_.store((*c)->pid());
  return std::shared_ptr<transport::Connection>(std::move(*c));
}

Task<> Link::send_log_level(std::shared_ptr<transport::Connection> c) {
  std::string level;
  {
    util::MutexLock lk(mu_);
    if (modern_ || log_level_.empty() || !json::find(server_caps_, "logging")) co_return;
    level = log_level_;
  }
  json::Document p(rapidjson::kObjectType);
  p.AddMember("level", json::str(level, p.GetAllocator()), p.GetAllocator());
  transport::RequestOptions o;
  o.deadline = deadline();
  auto r = co_await c->call("logging/setLevel", &p, o);
  if (!r.message || r.message->error())
    spdlog::warn("upstream {}: logging/setLevel {} failed: {}", cfg_.name, level,
                 r.message ? jsonrpc::describe_error(*r.message->error()) : failure_text(r));
}

Task<bool> Link::discover(transport::Connection& c) {
  // A server that names this build's stateless version among the ones it
  // supports in a -32022 refusal is asked once more (the version sent may
  // have been a newer one elsewhere); anything else means initialize.
  for (int attempt = 0; attempt < 2; ++attempt) {
    json::Document p(rapidjson::kObjectType);
    add_envelope(p, nullptr);
    json::set(p["_meta"], mcp::kMetaCapabilities, json::copy(*json::parse(kClientCaps), p.GetAllocator()),
              p.GetAllocator());
    transport::RequestOptions o;
    // A server of the stateful revisions may ignore what it does not know
    // rather than answer: it gets a few seconds, not the whole timeout.
    o.deadline = std::min(deadline(), Clock::now() + 3s);
    auto r = co_await c.call("server/discover", &p, o);
    const json::Value* res = r.message ? r.message->result() : nullptr;
    const json::Value* err = r.message ? r.message->error() : nullptr;
    const json::Value* data = err ? json::find(*err, "data") : nullptr;
    const json::Value* versions = res    ? json::find(*res, "supportedVersions")
                                  : data ? json::find(*data, "supported")
                                         : nullptr;
    bool ours = false;
    if (versions && versions->IsArray())
      for (const auto& v : versions->GetArray())
        if (v.IsString() && mcp::is_stateless_version(v.GetString())) ours = true;
    if (!ours) co_return false;
    if (!res) continue;
    util::MutexLock lk(mu_);
    modern_ = true;
    protocol_ = mcp::kStatelessVersion;
    if (const auto* caps = json::find(*res, "capabilities"); caps && caps->IsObject())
      server_caps_ = json::clone(*caps);
    else
      server_caps_.SetObject();
    co_return true;
  }
  co_return false;
}

Task<> Link::listen_for_changes(std::shared_ptr<transport::Connection> c, std::shared_ptr<CancelSignal> stop) {
  json::Document p(rapidjson::kObjectType);
  json::Value filter(rapidjson::kObjectType);
  filter.AddMember("toolsListChanged", true, p.GetAllocator());
  filter.AddMember("promptsListChanged", true, p.GetAllocator());
  filter.AddMember("resourcesListChanged", true, p.GetAllocator());
  p.AddMember("notifications", filter, p.GetAllocator());
  add_envelope(p, nullptr);
  transport::RequestOptions o;
  o.deadline = Clock::now() + std::chrono::hours(24 * 365);
  o.cancel = stop.get();
  o.on_related = [this](jsonrpc::Message& m) { on_message(m); };
  auto r = co_await c->call("subscriptions/listen", &p, o);
  if (stop->cancelled()) co_return;
  if (r.message && r.message->error())
    spdlog::info("upstream {}: no list change notifications (subscriptions/listen: {})", cfg_.name,
                 jsonrpc::describe_error(*r.message->error()));
  else
    spdlog::warn("upstream {}: the subscriptions/listen stream ended; list changes are picked up on reconnect",
                 cfg_.name);
}

Task<Result<void>> Link::initialize(transport::Connection& c) {
  using P = config::Server::Protocol;
  // The revision to ask for in initialize. A client's own link under
  // `auto` mirrors its client: a server that speaks both eras then behaves
  // for the client as it would directly (mid-call requests are a stateful
  // era thing).
  std::string_view version = mcp::kLatestVersion;
  bool mirror = cfg_.protocol == P::Auto && role_ == Role::Client && mcp::is_supported(client_protocol_);
  if (mirror) version = client_protocol_;
  bool try_stateless = cfg_.protocol == P::Stateless || (cfg_.protocol == P::Auto && !mirror);
  bool stateless = false;
  if (try_stateless) stateless = co_await discover(c);
  if (stateless) {
    spdlog::info("upstream {}: connected (protocol {}, stateless)", cfg_.name, mcp::kStatelessVersion);
    co_return Result<void>{};
  }
  if (cfg_.protocol == P::Stateless)
    co_return Error{"the server does not speak protocol " + std::string(mcp::kStatelessVersion) +
                 " (server/discover did not offer it), which protocol: " + std::string(mcp::kStatelessVersion) +
                 " requires"};
  {
    util::MutexLock lk(mu_);
    modern_ = false;
  }
  json::Document p(rapidjson::kObjectType);
  auto& a = p.GetAllocator();
  p.AddMember("protocolVersion", json::str(version, a), a);
  p.AddMember("capabilities", json::copy(own_capabilities(), a), a);
  json::Value info(rapidjson::kObjectType);
  info.AddMember("name", "mcpgw", a);
  info.AddMember("version", MCPGW_VERSION, a);
  p.AddMember("clientInfo", info, a);
  transport::RequestOptions o;
  o.deadline = deadline();
  auto r = co_await c.call("initialize", &p, o);
  if (!r.message) co_return Error{"initialize: " + failure_text(r)};
  if (const auto* e = r.message->error()) co_return Error{"initialize failed: " + json::write(*e)};
  const auto* res = r.message->result();
  auto answered = res ? json::get_string(*res, "protocolVersion") : std::nullopt;
  if (!answered) co_return Error{"initialize result has no protocolVersion"};
  if (!mcp::is_supported(*answered))
    co_return Error{"server answered with protocol version " + std::string(*answered) + ", which mcpgw does not speak"};
  if (cfg_.protocol == P::Stateful && *answered != mcp::kLatestVersion)
    co_return Error{"the server answered initialize with protocol version " + std::string(*answered) + ", not " +
                 std::string(mcp::kLatestVersion) + ", which protocol: " + std::string(mcp::kLatestVersion) +
                 " requires"};
  c.set_protocol_version(std::string(*answered));
  {
    util::MutexLock lk(mu_);
    protocol_ = *answered;
    if (const auto* caps = json::find(*res, "capabilities"); caps && caps->IsObject())
      server_caps_ = json::clone(*caps);
    else
      server_caps_.SetObject();
  }
  c.notify("notifications/initialized", nullptr);
  c.listen();
  auto sinfo = json::find(*res, "serverInfo");
  spdlog::info("upstream {}: connected ({} {}, protocol {})", cfg_.name,
               sinfo ? json::get_string(*sinfo, "name").value_or("?") : "?",
               sinfo ? json::get_string(*sinfo, "version").value_or("?") : "?", *answered);
  co_return Result<void>{};
}

Task<Result<json::Document>> Link::list_pages(transport::Connection& c, const char* method, const char* key) {
  json::Document all(rapidjson::kArrayType);
  // Tools and prompts are keyed by name, resources by uri, templates by
  // uriTemplate: an entry without its key or a repeated one is dropped.
  const char* id_key = std::string_view(key) == "resources" || std::string_view(key) == "skills" ? "uri"
                       : std::string_view(key) == "resourceTemplates"                            ? "uriTemplate"
                                                                                                  : "name";
  std::set<std::string> seen, cursors;
  std::string cursor;
  for (int page = 0; page < kMaxPages; ++page) {
    json::Document p(rapidjson::kObjectType);
    if (!cursor.empty()) p.AddMember("cursor", json::str(cursor, p.GetAllocator()), p.GetAllocator());
    if (modern()) add_envelope(p, nullptr);
    transport::RequestOptions o;
    o.deadline = deadline();
    auto r = co_await c.call(method, &p, o);
    if (!r.message) co_return Error{std::string(method) + ": " + failure_text(r)};
    if (const auto* e = r.message->error()) co_return Error{std::string(method) + " failed: " + json::write(*e)};
    const auto* res = r.message->result();
    const auto* items = res ? json::find(*res, key) : nullptr;
    if (!items || !items->IsArray()) co_return Error{std::string(method) + " result has no " + key + " array"};
    for (const auto& t : items->GetArray()) {
      auto id = json::get_string(t, id_key);
      if (!id || id->empty()) {
        spdlog::warn("upstream {}: skipping an entry of {} without {}: {:.200}", cfg_.name, method, id_key,
                     json::write(t));
        continue;
      }
      if (!seen.insert(std::string(*id)).second) {
        spdlog::warn("upstream {}: skipping a second entry of {} with {} {}", cfg_.name, method, id_key, *id);
        continue;
      }
      all.PushBack(json::copy(t, all.GetAllocator()), all.GetAllocator());
    }
    auto next = json::get_string(*res, "nextCursor");
    if (!next || next->empty()) co_return all;
    cursor = std::string(*next);
    // A server that hands out a cursor twice would page forever.
    if (!cursors.insert(cursor).second) co_return Error{std::string(method) + " repeated cursor " + cursor};
  }
  co_return Error{std::string(method) + " returned more than " + std::to_string(kMaxPages) + " pages"};
}

Task<Result<std::shared_ptr<Listing>>> Link::list_all(transport::Connection& c) {
  auto l = std::make_shared<Listing>();
  json::Document caps;
  {
    util::MutexLock lk(mu_);
    caps = json::clone(server_caps_);
  }
  const auto* res_caps = json::find(caps, "resources");
  l->has_resources = res_caps != nullptr;
  l->can_subscribe = res_caps && json::find(*res_caps, "subscribe") && (*res_caps)["subscribe"].IsTrue();
  l->has_prompts = json::find(caps, "prompts") != nullptr;
  l->has_completions = json::find(caps, "completions") != nullptr;
  if (const auto* ext = json::find(caps, "extensions"); ext && ext->IsObject())
    l->extensions = json::clone(*ext);
  const auto* tasks = json::find(caps, "tasks");
  l->has_tasks = (tasks && tasks->IsObject()) || json::find(l->extensions, mcp::kTasksExtension);
  if (const auto* skills = json::find(l->extensions, mcp::kSkillsExtension); skills && skills->IsObject()) {
    l->has_skills = true;
    const auto* dir = json::find(*skills, "directoryRead");
    l->can_read_directories = dir && dir->IsTrue();
  }
  // Servers that list tools without declaring the capability exist; ask
  // anyway and treat "method not found" as no tools.
  auto tools = co_await list_pages(c, "tools/list", "tools");
  if (!tools && json::find(caps, "tools")) co_return Error{tools.error()};
  if (tools) l->tools.Swap(*tools);
  // Over HTTP a stateless server's tools mirror arguments into headers; a
  // tool whose declarations are broken cannot be called correctly.
  if (modern() && cfg_.transport == config::Server::Transport::Http) {
    json::Document kept(rapidjson::kArrayType);
    for (auto& t : l->tools.GetArray()) {
      if (std::string why = mcp::x_mcp_header_problem(t); !why.empty()) {
        spdlog::warn("upstream {}: leaving out tool {}: invalid x-mcp-header declaration: {}", cfg_.name,
                     json::get_string(t, "name").value_or("?"), why);
        continue;
      }
      kept.PushBack(json::copy(t, kept.GetAllocator()), kept.GetAllocator());
    }
    l->tools.Swap(kept);
  }
  if (l->has_resources) {
    auto r = co_await list_pages(c, "resources/list", "resources");
    if (!r) co_return Error{r.error()};
    l->resources.Swap(*r);
    // Templates are optional even for servers with resources.
    auto t = co_await list_pages(c, "resources/templates/list", "resourceTemplates");
    if (t) l->resource_templates.Swap(*t);
  }
  if (l->has_prompts) {
    auto p = co_await list_pages(c, "prompts/list", "prompts");
    if (!p) co_return Error{p.error()};
    l->prompts.Swap(*p);
  }
  if (l->has_skills) {
    // The manifests only (SEP-2640 forbids fetching skill files ahead of
    // need). A broken listing costs the server its skills, not its tools.
    auto k = co_await list_pages(c, "skills/list", "skills");
    if (k) l->skills.Swap(*k);
    else spdlog::warn("upstream {}: its skills are not listed: {}", cfg_.name, k.error());
  }
  co_return l;
}

bool Link::start_attempt() {
  util::MutexLock lk(mu_);
  if (stopping_) return false;
  conn_dead_ = false;
  // A retry keeps the failure it retries: a call refused meanwhile says
  // why the server is down, not only that it is trying again.
  status_ = state_ == State::Down ? status_ + "; connecting again" : "connecting";
  state_ = State::Connecting;
  return true;
}

Task<Result<void>> Link::connect_and_initialize(std::shared_ptr<transport::Connection>& conn) {
  auto c = connect();
  if (!c) co_return Error{c.error()};
  conn = std::move(*c);
  Result<void> ok = co_await initialize(*conn);
  if (ok) co_await send_log_level(conn);
  co_return ok;
}

void Link::go_live(std::shared_ptr<transport::Connection> conn, std::shared_ptr<const Listing> listing,
                       bool first) {
  {
    util::MutexLock lk(mu_);
    conn_ = std::move(conn);
    listing_ = std::move(listing);
    status_ = "connected";
    state_ = State::Connected;
    refresh_ = false;
    if (first) ++attempts_;
    first_done_ = true;
  }
  ready_.store(true);
  if (role_ == Role::Shared) listener_.on_health(cfg_.name, true);
  // A principal's listing is its server's before anyone waiting for this
  // link is woken: their call looks its tool up there.
  if (on_listed_) on_listed_(Link::listing());
  changed_.notify();
}

Task<Result<void>> Link::serve_connection(std::shared_ptr<transport::Connection> conn,
                                              std::shared_ptr<CancelSignal>& listen_stop) {
  bool counted = false;  // this connection's attempt, once
  for (;;) {
    auto listing = co_await list_all(*conn);
    if (!listing) co_return Error{listing.error()};
    go_live(conn, std::move(*listing), !counted);
    counted = true;
    if (modern() && role_ == Role::Shared && !listen_stop) {
      listen_stop = std::make_shared<CancelSignal>();
      auto listen = [self = shared_from_this(), conn, listen_stop]() -> Task<> {
        co_await self->listen_for_changes(conn, listen_stop);
      };
      asio::co_spawn(asio::make_strand(io_.executor()), std::move(listen), asio::detached);
    }
    // The catalog lists the shared connection's tools; a client's own
    // connection serves calls only, a principal's lists for its server.
    if (role_ == Role::Shared) listener_.on_tools_changed(cfg_.name);
    std::function<bool()> woken = [this]() REQUIRES(mu_) { return stopping_ || conn_dead_ || refresh_; };
    co_await wait_until(woken);
    if (util::MutexLock lk(mu_); stopping_ || conn_dead_) co_return Result<void>{};
  }
}

Task<> Link::end_attempt(const Result<void>& ok, std::shared_ptr<transport::Connection> conn,
                             std::shared_ptr<CancelSignal> listen_stop) {
  ready_.store(false);
  if (role_ == Role::Shared) listener_.on_health(cfg_.name, false);
  if (listen_stop) listen_stop->cancel();
  bool settled_now = false;  // this attempt was the first to end
  {
    util::MutexLock lk(mu_);
    if (!ok) {
      status_ = ok.error();
      state_ = State::Down;
      note_trouble_locked(ok.error());
      ++attempts_;
    }
    conn_.reset();
    settled_now = !first_done_;
    first_done_ = true;
  }
  changed_.notify();
  if (!ok) spdlog::warn("upstream {}: {}", cfg_.name, ok.error());
  // Calls waiting for this server's tools learn that it did not come up.
  if (settled_now && role_ == Role::Shared) listener_.on_tools_changed(cfg_.name);
  // Callers may still hold the connection; closing it fails their calls
  // promptly instead of leaving them to time out.
  if (conn) co_await conn->shut();
  conn.reset();
  pid_.store(0);
}

Task<> Link::supervise() {
  auto backoff = 100ms;
  while (start_attempt()) {
    auto started = Clock::now();
    std::shared_ptr<transport::Connection> conn;
    std::shared_ptr<CancelSignal> listen_stop;
    Result<void> ok = co_await connect_and_initialize(conn);
    if (ok) ok = co_await serve_connection(conn, listen_stop);
    co_await end_attempt(ok, std::move(conn), std::move(listen_stop));
    // A principal's connection that cannot connect (its token went, the
    // server refuses it) stops: its next call obtains a token and a new one.
    if (role_ == Role::Principal && !ok) break;
    if (Clock::now() - started > 10s) backoff = 100ms;
    if (!co_await wait_backoff(backoff)) break;
    backoff = std::min(backoff * 2, std::chrono::milliseconds(30s));
  }
}

}  // namespace mcpgw::upstream
