#include "server/router.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "server/client_call.hpp"
#include "server/logging.hpp"
#include "server/redaction.hpp"
#include "server/server_span.hpp"
#include "server/tasks.hpp"

namespace mcpgw::server {
namespace {

/// What exception `e` says.
std::string what_failed(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
  }
  return "unknown error";
}

}  // namespace

Router::Router(std::shared_ptr<const config::Config> cfg, catalog::Catalog& catalog, Metrics& metrics,
               std::shared_ptr<const saga::Keyring> keyring, asio::any_io_executor io, Hooks hooks)
    : settings_(std::move(cfg), std::move(keyring)),
      io_(std::move(io)),
      catalog_(catalog),
      metrics_(metrics),
      hooks_(std::move(hooks)),
      sessions_(metrics, hooks_.log_level),
      subscriptions_(catalog),
      audit_(settings_.config()->audit, metrics_),
      tasks_(settings_.config()->cluster.secrets),
      services_{settings_, catalog_, metrics_, sessions_,   subscriptions_, engine_,
                forwarded_ids_, audit_, io_,     tasks_,      task_share_,    hooks_.upstream} {
  audit_.set_redaction(settings_.config()->redact.detectors);
  redact_logs(settings_.config()->redact.detectors);
}

Router::~Router() { drain(); }

void Router::drain() {
  // Parked calls would wait for continuations that cannot come any more;
  // requests in flight may be driving them. Tasks end with the process.
  engine_.abandon_parked();
  tasks_.cancel_all();
  in_flight_->wait_idle();
  engine_.drain();
}

void Router::set_spans(mcp::SpanSink* spans) {
  redacting_spans_ = spans ? std::make_unique<RedactingSpans>(*spans, settings_) : nullptr;
  services_.spans = redacting_spans_.get();
}

void Router::set_config(std::shared_ptr<const config::Config> cfg, std::shared_ptr<const saga::Keyring> keyring) {
  audit_.configure(cfg->audit);
  audit_.set_redaction(cfg->redact.detectors);
  redact_logs(cfg->redact.detectors);
  tasks_.set_secrets(cfg->cluster.secrets);
  settings_.set(std::move(cfg), std::move(keyring));
}

std::size_t Router::suspended_calls() const { return engine_.parked_count(); }

void Router::refused(const transport::ClientContext& ctx, std::string_view reason, std::string_view detail,
                     std::string_view tool) {
  AuditRecord r;
  r.principal = ctx.principal;
  r.tool = std::string(tool);
  // The mode the request targeted: the default one for the plain MCP path.
  r.mode = ctx.mode.empty() ? settings_.config()->default_mode : ctx.mode;
  r.reason = std::string(detail);
  audit_.refused(reason, std::move(r));
}

std::vector<std::string> Router::modes() const {
  std::vector<std::string> out{"all"};
  for (const auto& m : settings_.config()->modes) out.push_back(m.name);
  return out;
}

Result<std::shared_ptr<transport::Session>> Router::open_session(const transport::ClientContext& ctx) {
  auto cfg = settings_.config();
  std::string mode = ctx.mode.empty() ? cfg->default_mode : ctx.mode;
  auto known = modes();
  if (std::find(known.begin(), known.end(), mode) == known.end()) {
    std::string list;
    for (const auto& m : known) {
      if (!list.empty()) list += ", ";
      list += m;
    }
    return Error{"unknown mode \"" + mode + "\"; available modes: " + list};
  }
  if (!ctx.allowed_modes.empty() &&
      std::find(ctx.allowed_modes.begin(), ctx.allowed_modes.end(), mode) == ctx.allowed_modes.end()) {
    std::string why = "principal \"" + ctx.principal + "\" may not use mode \"" + mode + "\"";
    AuditRecord r;
    r.principal = ctx.principal;
    r.mode = mode;
    r.reason = why;
    audit_.refused("auth", std::move(r));
    return Error{why};
  }
  auto s = std::make_shared<McpSession>(mode, ctx.stateless);
  // A stateless request's session lasts one request: it is not a client
  // session to count or to notify.
  if (!ctx.stateless) sessions_.add(s);
  return std::shared_ptr<transport::Session>(std::move(s));
}

void Router::close_session(const std::shared_ptr<transport::Session>& session) {
  auto s = std::static_pointer_cast<McpSession>(session);
  s->end();
  if (s->context().stateless) return;
  // Unsubscribing upstream and stopping per-client upstreams wait for them,
  // and the transports call this on an I/O thread: a coroutine does that,
  // which a shutdown waits for (drain()) before it stops the upstreams.
  spawn("ending session " + s->id().substr(0, 8), [this, s]() -> Task<> {
    co_await subscriptions_.drop(s);
    if (hooks_.session_closed) co_await hooks_.session_closed(s->id());
    sessions_.remove(s);
  });
}

void Router::list_changed(std::string_view what) {
  sessions_.notify(jsonrpc::make_notification("notifications/" + std::string(what) + "/list_changed", nullptr),
                   [](const McpSession& s) { return s.initialized(); });
  subscriptions_.list_changed(what);
}

void Router::notify_session(const std::string& id, std::string_view method, const json::Value* params) {
  if (id.empty()) return;
  if (auto s = sessions_.find(id)) s->notify(jsonrpc::make_notification(method, params));
}

void Router::resource_updated(const upstream::Upstream& origin, const jsonrpc::Message& msg) {
  auto uri = msg.params() ? json::get_string(*msg.params(), "uri") : std::nullopt;
  if (!uri) return;
  std::string exposed = catalog_.snapshot()->expose_uri(origin, *uri);
  json::Document params = json::clone(*msg.params());
  json::set(params, "uri", json::str(exposed, params.GetAllocator()), params.GetAllocator());
  subscriptions_.resource_updated(exposed, jsonrpc::make_notification("notifications/resources/updated", &params));
}

void Router::upstream_replaced(std::shared_ptr<upstream::Upstream> was, std::shared_ptr<upstream::Upstream> now) {
  spawn("moving the subscriptions of " + now->name(),
        [this, was, now]() -> Task<> { co_await subscriptions_.moved(*was, now); });
}

void Router::task_status(const std::string& server, const jsonrpc::Message& msg) {
  auto st = msg.params() ? mcp::read_task(*msg.params()) : std::nullopt;
  auto record = st ? tasks_.by_upstream(server, st->task_id) : nullptr;
  if (!record || record->session.empty()) return;
  st->task_id = record->id;
  notify_status(services_, *record, *st);
}

void Router::handle(const std::shared_ptr<transport::Session>& session, jsonrpc::Message msg,
                    std::shared_ptr<transport::Exchange> ex) {
  auto s = std::static_pointer_cast<McpSession>(session);
  if (msg.is_response()) {
    // An answer to a request an upstream sent this client through us.
    metrics_.message("response");
    auto id = msg.id().string();
    if (!id) return;
    if (auto call = s->asker(*id)) call->answer(*id, std::move(msg));
    return;
  }
  metrics_.message(msg.method());
  if (msg.is_notification()) {
    if (auto notification = find_notification(msg.method())) notification(services_, *s, msg);
    return;
  }
  request(s, std::move(msg), std::move(ex));
}

void Router::request(const std::shared_ptr<McpSession>& parent, jsonrpc::Message msg,
                     std::shared_ptr<transport::Exchange> ex) {
  auto decoded = mcp::decode(msg, parent->stateless(), parent->negotiated());
  if (auto* r = std::get_if<mcp::Refusal>(&decoded))
    return ex->reply(jsonrpc::make_error(msg.id(), r->code, r->message, r->data.IsNull() ? nullptr : &r->data), r->code);
  const Method* method = find_method(msg.method());
  if (!method)
    return ex->reply(
        jsonrpc::make_error(msg.id(), jsonrpc::kMethodNotFound, "Method not found: " + std::string(msg.method())),
        jsonrpc::kMethodNotFound);
  auto ctx = std::make_shared<mcp::RequestContext>(std::move(std::get<mcp::RequestContext>(decoded)));
  // A stateless request's own view of its client, from its envelope.
  auto s = ctx->stateless ? McpSession::for_request(parent, ctx->envelope) : parent;
  // A listen lasts as long as its client listens: no span of its own.
  auto span = method->span ? start_server_span(services_.spans, msg, *s, *ctx) : nullptr;
  // While servers start, an answer from the whole catalog waits for them.
  const bool after_startup = method->whole && catalog_.starting();
  if (method->runs == Runs::Inline && !after_startup) {
    Request r{s, msg, ex, *ctx};
    Answer answer = method->answer(services_, r);
    end_server_span(span, answer);
    int error = answer.error_code();
    return ex->reply(finish(std::move(answer), msg, *ctx), error);
  }
  // The coroutine outlives this call, so it owns what it reads.
  auto m = std::make_shared<jsonrpc::Message>(std::move(msg));
  run_async(parent, s, *method, std::move(m), std::move(ex), std::move(ctx), std::move(span), after_startup);
}

SplicedText Router::finish(Answer answer, const jsonrpc::Message& m, const mcp::RequestContext& ctx) {
  // Lists and reads are the same for every client of a mode unless
  // principals see different things.
  // A relayed result needs no stamp but a stateless client's.
  if (!answer.is_error() && (ctx.stateless || !answer.raw()))
    mcp::encode_result(answer.body(), m.method(), ctx, settings_.config()->auth.enabled ? "private" : "public",
                       answer.body().GetAllocator());
  return answer.write(m.id());
}

void Router::run_async(const std::shared_ptr<McpSession>& parent, const std::shared_ptr<McpSession>& s,
                       const Method& method, std::shared_ptr<jsonrpc::Message> m,
                       std::shared_ptr<transport::Exchange> ex, std::shared_ptr<mcp::RequestContext> ctx,
                       std::shared_ptr<mcp::SpanTimer> span, bool after_startup) {
  std::string key(m->id().json());
  parent->track(key, ex);
  // Counted in flight from here; counted out and untracked however the
  // coroutine ends: answered, or destroyed unrun with the loop.
  struct Done {
    Done(std::shared_ptr<InFlight> in_flight, std::shared_ptr<McpSession> parent, std::string key)
        : in_flight(std::move(in_flight)), parent(std::move(parent)), key(std::move(key)) {
      this->in_flight->enter();
    }
    ~Done() {
      untrack();
      in_flight->leave();
    }
    /// No longer one of the session's requests in flight: before its answer
    /// goes, since the client may send its next request the moment it has
    /// it (the answer's writer may run at once, before this coroutine ends).
    void untrack() {
      if (!std::exchange(untracked, true)) parent->untrack(key);
    }
    Done(const Done&) = delete;
    Done& operator=(const Done&) = delete;
    std::shared_ptr<InFlight> in_flight;
    std::shared_ptr<McpSession> parent;
    std::string key;
    bool untracked = false;
  };
  auto done = std::make_shared<Done>(in_flight_, parent, std::move(key));
  // On the strand that writes its answer (its HTTP connection's): starting
  // and answering need no hop to another thread, and a connection serves
  // one request at a time anyway. Otherwise a strand of its own.
  asio::any_io_executor strand = ex->executor();
  if (!strand) strand = asio::make_strand(io_);
  asio::co_spawn(
      strand,
      [this, &method, s, m, ex, ctx, span, done, after_startup]() -> Task<> {
        Request r{s, *m, ex, *ctx};
        if (after_startup) {
          spdlog::debug("{} waits for the upstreams in their first connection attempt ({})", m->method(),
                        catalog_.snapshot()->pending_names());
          // Bounded by startup_wait_ms, and by the client going away.
          co_await catalog_.started(std::chrono::steady_clock::time_point::max(), &ex->cancel_signal());
        }
        auto respond = [&](Answer answer) {
          end_server_span(span, answer);
          int error = answer.error_code();
          SplicedText written = finish(std::move(answer), *m, *ctx);
          done->untrack();
          ex->reply(std::move(written), error);
        };
        // Two statements, not a conditional with co_await in it: GCC 12
        // destroys such a conditional's result twice.
        if (method.runs == Runs::Inline) {
          respond(method.answer(services_, r));
          co_return;
        }
        respond(co_await method.task(services_, r));
      },
      [m, ex, done](std::exception_ptr e) {
        if (!e) return;
        std::string why = what_failed(e);
        spdlog::error("{} failed: {}", m->method(), why);
        ex->reply(jsonrpc::make_error(m->id(), jsonrpc::kInternalError, "mcpgw: internal error: " + why),
                  jsonrpc::kInternalError);
      });
}

void Router::spawn(std::string_view what, std::function<Task<>()> work) {
  // Counted in flight from here; counted out however the coroutine ends:
  // done, or destroyed unrun with the loop.
  struct Done {
    explicit Done(std::shared_ptr<InFlight> in_flight) : in_flight(std::move(in_flight)) { this->in_flight->enter(); }
    ~Done() { in_flight->leave(); }
    Done(const Done&) = delete;
    Done& operator=(const Done&) = delete;
    std::shared_ptr<InFlight> in_flight;
  };
  auto done = std::make_shared<Done>(in_flight_);
  asio::co_spawn(asio::make_strand(io_), std::move(work), [done, what = std::string(what)](std::exception_ptr e) {
    if (e) spdlog::error("{} failed: {}", what, what_failed(e));
  });
}

}  // namespace mcpgw::server
