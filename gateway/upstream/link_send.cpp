// A link's requests. Each goes through the send filters, outermost first:
// the input rounds of a stateless server (InputFilter: the rest of the
// chain runs once per round), the request's client span (TraceFilter), the
// readable failure and the link's last trouble (FailureFilter), the
// gateway's progress token and the way back to the calling client
// (ClientRoutingFilter), the client's forwarded headers (ForwardFilter),
// and the send itself with one renewal of a forgotten session
// (RenewalFilter); around them, a tools/call's or other request's answer as
// the server's callers read it (call_tool, request).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "mcp/era.hpp"
#include "mcp/protocol.hpp"
#include "mcp/resource_refs.hpp"
#include "mcp/span.hpp"
#include "upstream/link.hpp"

namespace mcpgw::upstream {
namespace {

using Clock = std::chrono::steady_clock;

/// Rounds of input_required a stateless server may ask for one call.
constexpr int kMaxInputRounds = 16;

/// Whether outcome `r` says the server is unhealthy (rather than that this
/// one call was wrong, refused or given up on by its client).
bool server_failed(const transport::Response& r) {
  using F = transport::Failure;
  // An OAuth token that could not be had or was refused says nothing of the server.
  if (!r.message)
    return r.failure != F::Cancelled && r.failure != F::TooLarge && r.failure != F::Rejected &&
           r.failure != F::Credential && r.failure != F::Unauthorized;
  const json::Value* e = r.message->error();
  const json::Value* code = e ? json::find(*e, "code") : nullptr;
  return code && code->IsInt() && (code->GetInt() == jsonrpc::kInternalError || code->GetInt() == jsonrpc::kParseError);
}

/// The `error.type` of a request that got no answer.
std::string_view failure_type(transport::Failure f) {
  switch (f) {
    case transport::Failure::Timeout: return "timeout";
    case transport::Failure::Cancelled: return "cancelled";
    case transport::Failure::TooLarge: return "response_too_large";
    default: return "unavailable";
  }
}

}  // namespace


/// The input rounds of a stateless server: as long as it answers
/// input_required, the client is asked (in whatever form it speaks) and
/// the request goes through the rest of the chain again with the answers
/// and the server's state, up to kMaxInputRounds times. Each round's params
/// are the last round's (the filters after this one stamp theirs anew).
class Link::InputFilter final : public SendFilter {
 public:
  explicit InputFilter(const Link& l) : link_(l) {}

  /// Not a coroutine for a server of the session revisions, which never
  /// answers input_required: most calls pay no frame for this filter.
  Task<transport::Response> on_call(Outgoing& out, SendNext next) override {
    if (!out.stateless) return next(out);
    return rounds(out, next);
  }

 private:
  Task<transport::Response> rounds(Outgoing& out, SendNext next) {
    for (int round = 0;; ++round) {
      transport::Response r = co_await next(out);
      const json::Value* res = r.message ? r.message->result() : nullptr;
      if (!res || json::get_string(*res, "resultType") != "input_required") co_return r;
      if (round == kMaxInputRounds)
        co_return failed(r.message->id(), jsonrpc::kInternalError,
                         "mcpgw: upstream '" + link_.cfg_.name + "' asked for client input more than " +
                             std::to_string(kMaxInputRounds) + " times in one call");
      auto answers = co_await ask_client(*res, out.opts, "upstream '" + link_.cfg_.name + "'", false);
      if (!answers) co_return failed(r.message->id(), jsonrpc::kInternalError, answers.error());
      if (answers->rpc_error) {
        auto msg = jsonrpc::parse(jsonrpc::make_error_response(r.message->id(), answers->body));
        co_return transport::Response{std::move(msg.messages.front()), transport::Failure::Transport, {}};
      }
      auto& a = out.params.GetAllocator();
      json::set(out.params, "inputResponses", json::copy(answers->body, a), a);
      if (const json::Value* state = json::find(*res, "requestState"))
        json::set(out.params, "requestState", json::copy(*state, a), a);
      else
        out.params.RemoveMember("requestState");
    }
  }

  const Link& link_;
};

/// Each request is a child span of the client's call (a client span when
/// spans are recorded): a header over HTTP, `_meta` where there are no
/// headers (stdio).
class Link::TraceFilter final : public SendFilter {
 public:
  explicit TraceFilter(const Link& l) : link_(l) {}

  Task<transport::Response> on_call(Outgoing& out, SendNext next) override {
    if (!out.opts.trace) return next(out);
    return traced(out, next);
  }

 private:
  /// on_call with a trace; a coroutine only then, since it finishes the
  /// span after the rest of the chain. The span is on the heap: in the
  /// frame it would make it too big for the allocator's fast path.
  Task<transport::Response> traced(Outgoing& out, SendNext next) {
    auto span = start_span(out);
    transport::Response r = co_await next(out);
    if (span->recording()) {
      link_.describe_client_span(span->span(), out, r);
      span->finish();
    }
    co_return r;
  }

  /// The request's span, its context in `out` (a header or `_meta`).
  std::unique_ptr<mcp::SpanTimer> start_span(Outgoing& out) const {
    auto span = std::make_unique<mcp::SpanTimer>(out.opts.spans, *out.opts.trace, out.method,
                                                 mcp::target_of(out.method, &out.params), mcp::Span::Kind::Client);
    std::string child = span->context().header();
    auto& a = out.params.GetAllocator();
    if (link_.cfg_.transport == config::Server::Transport::Http) {
      // A later input round replaces the earlier round's.
      auto& headers = out.wire.headers;
      auto had = std::find_if(headers.begin(), headers.end(), [](const auto& h) { return h.first == "traceparent"; });
      if (had != headers.end()) had->second = std::move(child);
      else headers.emplace_back("traceparent", std::move(child));
      if (json::Value* meta = json::find(out.params, "_meta"); meta && meta->IsObject())
        meta->RemoveMember(mcp::kMetaTraceparent.data());
    } else {
      json::set(json::object_member(out.params, "_meta", a), mcp::kMetaTraceparent, json::str(child, a), a);
    }
    return span;
  }

  const Link& link_;
};

/// A request that got no answer says why in words that name the server,
/// and, unless its client gave up, is the server's last trouble.
class Link::FailureFilter final : public SendFilter {
 public:
  explicit FailureFilter(Link& l) : link_(l) {}

  Task<transport::Response> on_call(Outgoing& out, SendNext next) override {
    transport::Response r = co_await next(out);
    if (r.message) co_return r;
    using F = transport::Failure;
    std::string why = link_.failure_text(r);
    bool plain = r.failure == F::Timeout || r.failure == F::Cancelled || out.unconnected;
    r.detail = "mcpgw: upstream '" + link_.cfg_.name + "' " + (plain ? why : "failed: " + why);
    if (r.failure != F::Cancelled) {
      util::MutexLock lk(link_.mu_);
      // A call a reload's drain cut says so, rather than "connection closed".
      if (link_.stopping_ && !link_.stop_reason_.empty())
        r.detail = "mcpgw: upstream '" + link_.cfg_.name + "' " + link_.stop_reason_ +
                   (out.unconnected ? "" : "; the call may have run there and was not sent again");
      link_.note_trouble_locked(out.method == "tools/call"
                                    ? r.detail + " (tools/call " +
                                          std::string(json::get_string(out.params, "name").value_or("")) + ")"
                                    : r.detail + " (" + std::string(out.method) + ")");
    }
    co_return r;
  }

 private:
  Link& link_;
};

/// The gateway's own progress token replaces the client's (tokens of
/// different clients never meet on a shared upstream connection), and
/// while the request runs, what the server sends for it (progress, its own
/// requests, messages about its tasks) reaches the calling client.
class Link::ClientRoutingFilter final : public SendFilter {
 public:
  explicit ClientRoutingFilter(Link& l) : link_(l) {}

  Task<transport::Response> on_call(Outgoing& out, SendNext next) override {
    const CallOptions& opts = out.opts;
    if (opts.on_progress || opts.client) return routed(out, next);
    if (json::Value* meta = json::find(out.params, "_meta"); meta && meta->IsObject())
      meta->RemoveMember("progressToken");
    return next(out);
  }

 private:
  /// on_call for a call with progress or a client; a coroutine only then,
  /// since its registration lasts while the rest of the chain runs.
  Task<transport::Response> routed(Outgoing& out, SendNext next) {
    out.token = "mcpgw-" + std::to_string(link_.next_token_.fetch_add(1));
    auto& a = out.params.GetAllocator();
    json::set(json::object_member(out.params, "_meta", a), "progressToken", json::str(out.token, a), a);
    Registration registered(link_, out);
    co_return co_await next(out);
  }

  /// The request's entries in the server's tables, for as long as it runs.
  class Registration {
   public:
    Registration(Link& l, Outgoing& out) : link_(l), token_(out.token) {
      const CallOptions& opts = out.opts;
      if (opts.on_progress) {
        util::MutexLock lk(link_.progress_mu_);
        link_.progress_.emplace(token_, opts.on_progress);
      }
      if (!opts.client) return;
      ActiveCall active{opts.client, opts.deadline};
      // A request about one of the server's tasks (tasks/result): what the
      // server sends tied to that task is this call's.
      auto task = out.method.rfind("tasks/", 0) == 0 ? json::get_string(out.params, "taskId") : std::nullopt;
      // The entries are made before the lock and only linked in under it:
      // the calls of every worker take it, twice per call.
      auto by_seq = node(std::map<std::uint64_t, ActiveCall>{}, 0, active);
      auto by_token = node(std::map<std::string, ActiveCall>{}, token_, active);
      {
        util::MutexLock lk(link_.calls_mu_);
        seq_ = active.seq = by_seq.mapped().seq = by_token.mapped().seq = ++link_.next_call_;
        by_seq.key() = seq_;
        link_.calls_.insert(std::move(by_seq));
        link_.by_token_.insert(std::move(by_token));
        if (task) link_.by_task_[std::string(*task)] = active;
      }
      // What arrives on this request's own stream (Streamable HTTP) is
      // this call's, whoever else is calling.
      out.wire.on_related = [&l = link_, active](jsonrpc::Message& m) { l.route(m, active); };
    }
    ~Registration() {
      {
        util::MutexLock lk(link_.progress_mu_);
        link_.progress_.erase(token_);
      }
      if (!seq_) return;
      // Unlinked under the lock, freed after it.
      std::map<std::uint64_t, ActiveCall>::node_type by_seq;
      std::map<std::string, ActiveCall>::node_type by_token;
      util::MutexLock lk(link_.calls_mu_);
      by_seq = link_.calls_.extract(seq_);
      by_token = link_.by_token_.extract(token_);
      std::erase_if(link_.by_task_, [seq = seq_](const auto& e) { return e.second.seq == seq; });
    }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;

   private:
    /// A map node holding `key` and `value`, to insert into a map of its type.
    template <class Map>
    static typename Map::node_type node(Map one, typename Map::key_type key, const ActiveCall& value) {
      return one.extract(one.emplace(std::move(key), value).first);
    }

    Link& link_;
    std::string token_;
    std::uint64_t seq_ = 0;
  };

  Link& link_;
};

/// The client's headers the server's forward_headers lists go with each of
/// its requests, whatever the revision.
class Link::ForwardFilter final : public SendFilter {
 public:
  explicit ForwardFilter(const Link& l) : link_(l) {}

  /// Not a coroutine: it has nothing to do on the way back.
  Task<transport::Response> on_call(Outgoing& out, SendNext next) override {
    if (const Caller* caller = out.opts.caller) {
      out.wire.forwarded.clear();  // an earlier input round's
      for (const auto& name : link_.cfg_.forward_headers)
        for (const auto& [have, value] : caller->headers)
          if (std::equal(name.begin(), name.end(), have.begin(), have.end(),
                         [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; }))
            out.wire.forwarded.emplace_back(name, value);
    }
    return next(out);
  }

 private:
  const Link& link_;
};

/// The send itself. When the server forgot our session (it restarted:
/// HTTP 400 or 404 to our session id) or could not be reached at all, the
/// request never got there: initialize anew and send once more within the
/// same deadline. Another session (a task's, see CallOptions) is not ours
/// to renew. A connection attempt under way is waited for, once.
class Link::RenewalFilter final : public SendFilter {
 public:
  explicit RenewalFilter(Link& l) : link_(l) {}

  Task<transport::Response> on_call(Outgoing& out, SendNext) override {
    using F = transport::Failure;
    transport::Response r;
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto c = link_.connection();
      if (!c) {
        bool renewed = attempt == 0 && link_.state() == State::Connecting && co_await link_.renew(nullptr, out.opts.deadline);
        if (renewed) continue;
        out.unconnected = true;
        co_return transport::Response{std::nullopt, F::Closed, "is not connected (" + link_.status() + ")"};
      }
      r = co_await c->call(out.method, &out.params, out.wire);
      bool renewable = (r.failure == F::SessionExpired && out.opts.upstream_session.empty()) || r.failure == F::Unreachable;
      if (r.message || !renewable || attempt == 1) break;
      spdlog::warn("upstream {}: {}; initializing a new session and retrying {}{}", link_.cfg_.name, r.detail, out.method,
                   out.opts.trace ? " trace=" + out.opts.trace->trace_id.str() : std::string());
      if (!co_await link_.renew(c, out.opts.deadline)) break;
    }
    co_return r;
  }

 private:
  Link& link_;
};

Chain<SendFilter> Link::send_filters() {
  Chain<SendFilter> chain;
  chain.add(std::make_unique<InputFilter>(*this));
  chain.add(std::make_unique<TraceFilter>(*this));
  chain.add(std::make_unique<FailureFilter>(*this));
  chain.add(std::make_unique<ClientRoutingFilter>(*this));
  chain.add(std::make_unique<ForwardFilter>(*this));
  chain.add(std::make_unique<RenewalFilter>(*this));
  return chain;
}

Outgoing Link::outgoing(std::string_view method, json::Document params, const CallOptions& opts,
                        std::vector<std::pair<std::string, std::string>> headers, bool stateless) const {
  if (stateless) add_envelope(params, &opts);
  Outgoing out{method, stateless, std::move(params), opts, {}, {}};
  out.wire.deadline = opts.deadline;
  out.wire.cancel = opts.cancel;
  out.wire.headers = std::move(headers);
  out.wire.session = opts.upstream_session;
  return out;
}

void Link::describe_client_span(mcp::Span& span, const Outgoing& out, const transport::Response& r) const {
  mcp::describe_request(span, out.method, mcp::target_of(out.method, &out.params), &out.params);
  span.set("mcpgw.server", cfg_.name);
  span.set("network.transport", cfg_.transport == config::Server::Transport::Http ? "tcp" : "pipe");
  // The revision the request was sent in, not the link's now (a reconnect
  // may have changed it meanwhile).
  if (out.stateless) span.set("mcp.protocol.version", mcp::kStatelessVersion);
  if (!r.message) {
    span.fail(failure_type(r.failure), r.detail);
    return;
  }
  mcp::set_request_id(span, r.message->id());
  if (const auto* e = r.message->error()) mcp::set_outcome(span, true, *e);
  else if (const auto* raw = r.message->raw()) mcp::set_tool_outcome(span, raw->facts.is_error);
  else if (const auto* res = r.message->result()) mcp::set_outcome(span, false, *res);
}


json::Document Link::own_result(const json::Value& result, bool stateless) {
  json::Document out = json::clone(result);
  // A stateless server's "complete" is the revision's framing, not content:
  // the gateway frames its own answers for each client's revision.
  if (stateless && json::get_string(out, "resultType") == "complete") out.RemoveMember("resultType");
  return out;
}

transport::Response Link::failed(const jsonrpc::Id& id, int code, const std::string& message) {
  auto msg = jsonrpc::parse(jsonrpc::make_error(id, code, message));
  return {std::move(msg.messages.front()), transport::Failure::Transport, {}};
}

Task<bool> Link::renew(std::shared_ptr<transport::Connection> dead, Clock::time_point deadline) {
  std::uint64_t seen = 0;
  {
    util::MutexLock lk(mu_);
    seen = attempts_;
    if (dead && conn_ == dead) conn_dead_ = true;
  }
  changed_.notify();
  std::function<bool()> settled = [&]() REQUIRES(mu_) {
    return (conn_ && conn_ != dead) || stopping_ || attempts_ > seen;
  };
  bool ready = co_await wait_until(settled, deadline);
  util::MutexLock lk(mu_);
  co_return ready && conn_ && conn_ != dead && !stopping_;
}

std::string Link::answering_session(const CallOptions& opts) const {
  if (!opts.upstream_session.empty()) return opts.upstream_session;
  auto c = connection();
  return c ? c->session_id() : std::string();
}

Task<Reply> Link::call_tool(std::string_view tool, const json::Value* arguments, const json::Value* meta,
                            const CallOptions& opts) {
  // The request made and its answer read outside the coroutine: their
  // locals would make its frame too big for the allocator's fast path.
  Outgoing out = tool_call(tool, arguments, meta, opts);
  // A stateless server's answer may be an input_required round, which the
  // send filters read: only the session revisions' answers are relayed.
  out.wire.relay = opts.relay && !out.stateless;
  auto r = co_await SendNext(send_chain_.order)(out);
  co_return tool_reply(r, out);
}

Outgoing Link::tool_call(std::string_view tool, const json::Value* arguments, const json::Value* meta,
                         const CallOptions& opts) const {
  json::Document p(rapidjson::kObjectType);
  auto& a = p.GetAllocator();
  p.AddMember("name", json::str(tool, a), a);
  // The client's own bytes go as they are (spliced in when the request is
  // written), not copied into the params and written again.
  if (arguments && !opts.raw_arguments) p.AddMember("arguments", json::copy(*arguments, a), a);
  if (meta && meta->IsObject()) p.AddMember("_meta", json::copy(*meta, a), a);
  const bool stateless = modern();
  // A stateless server hears of a task through the envelope (add_envelope).
  if (opts.task && !stateless) p.AddMember("task", json::copy(*opts.task, a), a);
  std::vector<std::pair<std::string, std::string>> headers;
  if (stateless) {
    auto l = listing();
    for (const auto& t : l->tools.GetArray())
      if (json::get_string(t, "name") == tool) headers = mcp::param_headers(t, arguments);
  }
  Outgoing out = outgoing("tools/call", std::move(p), opts, std::move(headers), stateless);
  if (arguments) out.wire.raw_arguments = opts.raw_arguments;
  return out;
}

Reply Link::tool_reply(const transport::Response& r, const Outgoing& out) const {
  if (!r.message) return Reply{false, mcp::tool_error(r.detail), server_failed(r)};
  if (const auto* e = r.message->error()) return Reply{true, json::clone(*e), server_failed(r)};
  // Relayed as it came unless the gateway acts on its content: a chain to
  // follow, an era's member, references to rewrite.
  if (const jsonrpc::RawResult* raw = r.message->raw();
      raw && !raw->facts.next_tool && !raw->facts.result_type && !(cfg_.prefix && raw->facts.uri))
    return Reply{false, json::Document(), false, answering_session(out.opts), std::make_shared<const jsonrpc::RawResult>(*raw)};
  const auto* res = r.message->result();
  if (!res || !res->IsObject())
    return Reply{false, mcp::tool_error("mcpgw: upstream '" + cfg_.name + "' returned a result that is not an object")};
  json::Document result = own_result(*res, out.stateless);
  // References to this server's resources leave it in the form clients
  // read them back by, whoever made the call (client, chain hop, plugin).
  if (cfg_.prefix) mcp::expose_result_refs(cfg_.name, result, result.GetAllocator());
  return Reply{false, std::move(result), false, answering_session(out.opts)};
}

Task<Reply> Link::request(std::string_view method, const json::Value& params, const CallOptions& opts) {
  Outgoing out = outgoing(method, json::clone(params), opts, {}, modern());
  auto r = co_await SendNext(send_chain_.order)(out);
  co_return request_reply(r, out);
}

Reply Link::request_reply(const transport::Response& r, const Outgoing& out) const {
  if (!r.message) return Reply::error(jsonrpc::kInternalError, r.detail);
  if (const auto* e = r.message->error()) return Reply{true, json::clone(*e)};
  const auto* res = r.message->result();
  if (!res || !res->IsObject())
    return Reply::error(jsonrpc::kInternalError,
                        "mcpgw: upstream '" + cfg_.name + "' returned a result that is not an object");
  json::Document result = own_result(*res, out.stateless);
  // A task's CallToolResult leaves like a tools/call's: on its own
  // (tasks/result, 2025-11-25) or inlined in the task (tasks/get, 2026-07-28).
  if (cfg_.prefix && out.method == "tasks/result") mcp::expose_result_refs(cfg_.name, result, result.GetAllocator());
  if (json::Value* inlined = cfg_.prefix && out.method == "tasks/get" ? json::find(result, "result") : nullptr;
      inlined && inlined->IsObject())
    mcp::expose_result_refs(cfg_.name, *inlined, result.GetAllocator());
  return Reply{false, std::move(result), false, answering_session(out.opts)};
}

}  // namespace mcpgw::upstream
