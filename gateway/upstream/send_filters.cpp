// The filters of an upstream, outermost first. Upstream::send: the
// request's client span (TraceFilter), the readable failure and the
// server's last trouble (FailureFilter), the gateway's progress token and
// the way back to the calling client (ClientRoutingFilter), the client's
// forwarded headers (ForwardFilter), and the send itself with one renewal
// of a forgotten session (RenewalFilter). Upstream::call_tool: the circuit
// breaker (BreakerFilter), max_concurrency (LimiterFilter), and the request
// (RequestFilter), which goes through the send filters.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "mcp/era.hpp"
#include "mcp/protocol.hpp"
#include "mcp/resource_refs.hpp"
#include "mcp/span.hpp"
#include "upstream/upstream.hpp"

namespace mcpgw::upstream {

/// Each request is a child span of the client's call (a client span when
/// spans are recorded): a header over HTTP, `_meta` where there are no
/// headers (stdio).
class Upstream::TraceFilter final : public SendFilter {
 public:
  explicit TraceFilter(const Upstream& u) : u_(u) {}

  Task<transport::Response> on_call(Outgoing& out, SendNext next) override {
    if (!out.opts.trace) return next(out);
    return traced(out, next);
  }

 private:
  /// on_call with a trace; a coroutine only then, since it finishes the
  /// span after the rest of the chain.
  Task<transport::Response> traced(Outgoing& out, SendNext next) {
    mcp::SpanTimer span(out.opts.spans, *out.opts.trace, out.method, mcp::target_of(out.method, &out.params),
                        mcp::Span::Kind::Client);
    std::string child = span.context().header();
    auto& a = out.params.GetAllocator();
    if (u_.cfg_.transport == config::Server::Transport::Http) {
      out.wire.headers.emplace_back("traceparent", child);
      if (json::Value* meta = json::find(out.params, "_meta"); meta && meta->IsObject())
        meta->RemoveMember(mcp::kMetaTraceparent.data());
    } else {
      json::set(json::object_member(out.params, "_meta", a), mcp::kMetaTraceparent, json::str(child, a), a);
    }
    transport::Response r = co_await next(out);
    if (span.recording()) {
      u_.describe_client_span(span.span(), out.method, out.params, r);
      span.finish();
    }
    co_return r;
  }

  const Upstream& u_;
};

/// A request that got no answer says why in words that name the server,
/// and, unless its client gave up, is the server's last trouble.
class Upstream::FailureFilter final : public SendFilter {
 public:
  explicit FailureFilter(Upstream& u) : u_(u) {}

  Task<transport::Response> on_call(Outgoing& out, SendNext next) override {
    transport::Response r = co_await next(out);
    if (r.message) co_return r;
    using F = transport::Failure;
    std::string why = u_.failure_text(r);
    bool plain = r.failure == F::Timeout || r.failure == F::Cancelled || out.unconnected;
    r.detail = "mcpgw: upstream '" + u_.cfg_.name + "' " + (plain ? why : "failed: " + why);
    if (r.failure != F::Cancelled) {
      std::string what = out.method == "tools/call" ? r.detail + " (tools/call " +
                                                          std::string(json::get_string(out.params, "name").value_or("")) + ")"
                                                    : r.detail + " (" + std::string(out.method) + ")";
      util::MutexLock lk(u_.mu_);
      u_.note_trouble_locked(std::move(what));
    }
    co_return r;
  }

 private:
  Upstream& u_;
};

/// The gateway's own progress token replaces the client's (tokens of
/// different clients never meet on a shared upstream connection), and
/// while the request runs, what the server sends for it (progress, its own
/// requests, messages about its tasks) reaches the calling client.
class Upstream::ClientRoutingFilter final : public SendFilter {
 public:
  explicit ClientRoutingFilter(Upstream& u) : u_(u) {}

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
    out.token = "mcpgw-" + std::to_string(u_.next_token_.fetch_add(1));
    auto& a = out.params.GetAllocator();
    json::set(json::object_member(out.params, "_meta", a), "progressToken", json::str(out.token, a), a);
    Registration registered(u_, out);
    co_return co_await next(out);
  }

  /// The request's entries in the server's tables, for as long as it runs.
  class Registration {
   public:
    Registration(Upstream& u, Outgoing& out) : u_(u), token_(out.token) {
      const CallOptions& opts = out.opts;
      if (opts.on_progress) {
        util::MutexLock lk(u_.progress_mu_);
        u_.progress_.emplace(token_, opts.on_progress);
      }
      if (!opts.client) return;
      ActiveCall active{opts.client, opts.deadline};
      // A request about one of the server's tasks (tasks/result): what the
      // server sends tied to that task is this call's.
      auto task = out.method.rfind("tasks/", 0) == 0 ? json::get_string(out.params, "taskId") : std::nullopt;
      {
        util::MutexLock lk(u_.calls_mu_);
        seq_ = active.seq = ++u_.next_call_;
        u_.calls_.emplace(seq_, active);
        u_.by_token_.emplace(token_, active);
        if (task) u_.by_task_[std::string(*task)] = active;
      }
      // What arrives on this request's own stream (Streamable HTTP) is
      // this call's, whoever else is calling.
      out.wire.on_related = [&u = u_, active](jsonrpc::Message& m) { u.route(m, active); };
    }
    ~Registration() {
      {
        util::MutexLock lk(u_.progress_mu_);
        u_.progress_.erase(token_);
      }
      if (!seq_) return;
      util::MutexLock lk(u_.calls_mu_);
      u_.calls_.erase(seq_);
      u_.by_token_.erase(token_);
      std::erase_if(u_.by_task_, [seq = seq_](const auto& e) { return e.second.seq == seq; });
    }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;

   private:
    Upstream& u_;
    std::string token_;
    std::uint64_t seq_ = 0;
  };

  Upstream& u_;
};

/// The client's headers the server's forward_headers lists go with each of
/// its requests, whatever the revision.
class Upstream::ForwardFilter final : public SendFilter {
 public:
  explicit ForwardFilter(const Upstream& u) : u_(u) {}

  /// Not a coroutine: it has nothing to do on the way back.
  Task<transport::Response> on_call(Outgoing& out, SendNext next) override {
    if (const Caller* caller = out.opts.caller) {
      for (const auto& name : u_.cfg_.forward_headers)
        for (const auto& [have, value] : caller->headers)
          if (std::equal(name.begin(), name.end(), have.begin(), have.end(),
                         [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; }))
            out.wire.forwarded.emplace_back(name, value);
    }
    return next(out);
  }

 private:
  const Upstream& u_;
};

/// The send itself. When the server forgot our session (it restarted:
/// HTTP 400 or 404 to our session id) or could not be reached at all, the
/// request never got there: initialize anew and send once more within the
/// same deadline. Another session (a task's, see CallOptions) is not ours
/// to renew. A connection attempt under way is waited for, once.
class Upstream::RenewalFilter final : public SendFilter {
 public:
  explicit RenewalFilter(Upstream& u) : u_(u) {}

  Task<transport::Response> on_call(Outgoing& out, SendNext) override {
    using F = transport::Failure;
    transport::Response r;
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto c = u_.connection();
      if (!c) {
        bool renewed = attempt == 0 && u_.state() == State::Connecting && co_await u_.renew(nullptr, out.opts.deadline);
        if (renewed) continue;
        out.unconnected = true;
        co_return transport::Response{std::nullopt, F::Closed, "is not connected (" + u_.status() + ")"};
      }
      r = co_await c->call(out.method, &out.params, out.wire);
      bool renewable = (r.failure == F::SessionExpired && out.opts.upstream_session.empty()) || r.failure == F::Unreachable;
      if (r.message || !renewable || attempt == 1) break;
      spdlog::warn("upstream {}: {}; initializing a new session and retrying {}{}", u_.cfg_.name, r.detail, out.method,
                   out.opts.trace ? " trace=" + out.opts.trace->trace_id.str() : std::string());
      if (!co_await u_.renew(c, out.opts.deadline)) break;
    }
    co_return r;
  }

 private:
  Upstream& u_;
};

/// The circuit breaker (`servers[].circuit`): while it is open a call
/// fails fast, naming the server; once `open_ms` passed, one call probes.
/// The outcome of an admitted call is what it counts, unless its client
/// gave up or a filter after it refused the call: those say nothing of the
/// server, and a probe that ends so lets the next call probe.
class Upstream::BreakerFilter final : public ToolFilter {
 public:
  explicit BreakerFilter(Upstream& u) : u_(u) {}

  Task<Reply> on_call(ToolCall& call, ToolNext next) override {
    std::string why;
    auto ticket = u_.breaker_.admit(why);
    if (!ticket) co_return Reply{false, mcp::tool_error("mcpgw: upstream '" + u_.cfg_.name + "' is failing: " + why)};
    if (ticket->probe) {
      spdlog::info("upstream {}: circuit half-open: probing with a call of {}", u_.cfg_.name, call.tool);
      u_.listener_.on_circuit(u_.cfg_.name, Breaker::State::HalfOpen);
    }
    Reply r = co_await next(call);
    if (call.refused || (call.opts.cancel && call.opts.cancel->cancelled())) u_.breaker_.release(*ticket);
    else if (auto changed = u_.breaker_.record(*ticket, !r.server_failed)) u_.circuit_changed(*changed);
    co_return r;
  }

 private:
  Upstream& u_;
};

/// `servers[].max_concurrency`: the call waits in line for a slot, until
/// its deadline or cancellation, and holds it until it ends.
class Upstream::LimiterFilter final : public ToolFilter {
 public:
  explicit LimiterFilter(Upstream& u) : u_(u) {}

  Task<Reply> on_call(ToolCall& call, ToolNext next) override {
    auto slot = co_await u_.limiter_.acquire(call.opts.deadline, call.opts.cancel);
    if (!slot) {
      call.refused = true;
      co_return Reply{false, mcp::tool_error("mcpgw: upstream '" + u_.cfg_.name + "' " + slot.error())};
    }
    co_return co_await next(call);
  }

 private:
  Upstream& u_;
};

/// The request itself: the OAuth step of a per-principal server, the
/// caller's own connection (per client or principal: its chain, which
/// admits nothing again), then tools/call with its input rounds, and the
/// reply: a failure as an isError naming the server, a result in the form
/// clients read it.
class Upstream::RequestFilter final : public ToolFilter {
 public:
  explicit RequestFilter(Upstream& u) : u_(u) {}

  Task<Reply> on_call(ToolCall& call, ToolNext) override {
    const CallOptions& opts = call.opts;
    if (u_.per_principal() && !u_.child_)
      if (auto instead = co_await u_.authorize(opts)) co_return std::move(*instead);
    auto own = co_await u_.for_client(opts);
    if (!own) co_return Reply{false, mcp::tool_error(own.error())};
    if (*own) co_return co_await ToolNext((*own)->call_chain_.order)(call);
    json::Document p(rapidjson::kObjectType);
    auto& a = p.GetAllocator();
    p.AddMember("name", json::str(call.tool, a), a);
    if (call.arguments) p.AddMember("arguments", json::Value(*call.arguments, a), a);
    if (call.meta && call.meta->IsObject()) p.AddMember("_meta", json::Value(*call.meta, a), a);
    // A stateless server hears of a task through the envelope (add_envelope).
    if (opts.task && !u_.modern()) p.AddMember("task", json::Value(*opts.task, a), a);
    std::vector<std::pair<std::string, std::string>> headers;
    if (u_.modern()) {
      auto l = u_.listing();
      for (const auto& t : l->tools.GetArray())
        if (json::get_string(t, "name") == call.tool) headers = mcp::param_headers(t, call.arguments);
    }
    auto r = co_await u_.send_rounds("tools/call", p, opts, std::move(headers));
    if (!r.message) co_return Reply{false, mcp::tool_error(r.detail), server_failed(r)};
    if (const auto* e = r.message->error()) co_return Reply{true, json::clone(*e), server_failed(r)};
    const auto* res = r.message->result();
    if (!res || !res->IsObject())
      co_return Reply{false,
                      mcp::tool_error("mcpgw: upstream '" + u_.cfg_.name + "' returned a result that is not an object")};
    json::Document result = u_.own_result(*res);
    // References to this server's resources leave it in the form clients
    // read them back by, whoever made the call (client, chain hop, plugin).
    if (u_.cfg_.prefix) mcp::expose_result_refs(u_.cfg_.name, result, result.GetAllocator());
    co_return Reply{false, std::move(result), false, u_.answering_session(opts)};
  }

 private:
  /// Whether outcome `r` says the server is unhealthy (rather than that
  /// this one call was wrong, refused or given up on by its client).
  static bool server_failed(const transport::Response& r) {
    using F = transport::Failure;
    // An OAuth token that could not be had or was refused says nothing of the server.
    if (!r.message)
      return r.failure != F::Cancelled && r.failure != F::TooLarge && r.failure != F::Rejected &&
             r.failure != F::Credential && r.failure != F::Unauthorized;
    const json::Value* e = r.message->error();
    const json::Value* code = e ? json::find(*e, "code") : nullptr;
    return code && code->IsInt() && (code->GetInt() == jsonrpc::kInternalError || code->GetInt() == jsonrpc::kParseError);
  }

  Upstream& u_;
};

Chain<SendFilter> Upstream::send_filters() {
  Chain<SendFilter> chain;
  chain.add(std::make_unique<TraceFilter>(*this));
  chain.add(std::make_unique<FailureFilter>(*this));
  chain.add(std::make_unique<ClientRoutingFilter>(*this));
  chain.add(std::make_unique<ForwardFilter>(*this));
  chain.add(std::make_unique<RenewalFilter>(*this));
  return chain;
}

Chain<ToolFilter> Upstream::call_filters() {
  Chain<ToolFilter> chain;
  // A per-client or per-principal connection's calls were admitted by the
  // server's own; a breaker or limiter not configured costs a call nothing.
  if (!child_ && breaker_.enabled()) chain.add(std::make_unique<BreakerFilter>(*this));
  if (!child_ && cfg_.max_concurrency > 0) chain.add(std::make_unique<LimiterFilter>(*this));
  chain.add(std::make_unique<RequestFilter>(*this));
  return chain;
}

Task<transport::Response> Upstream::send(std::string_view method, json::Document params, const CallOptions& opts,
                                         std::vector<std::pair<std::string, std::string>> headers) {
  if (modern()) add_envelope(params, &opts);
  Outgoing out{method, std::move(params), opts, {}, {}};
  out.wire.deadline = opts.deadline;
  out.wire.cancel = opts.cancel;
  out.wire.headers = std::move(headers);
  out.wire.session = opts.upstream_session;
  co_return co_await SendNext(send_chain_.order)(out);
}

}  // namespace mcpgw::upstream
