#include "saga/engine.hpp"

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>

#include "jsonrpc/message.hpp"
#include "util/random.hpp"

namespace mcpgw::saga {
namespace {

/// An answer handed in by a continuation: a result, or `{"error": {...}}`
/// for a request the client could not take.
upstream::Reply given(const json::Value& v) {
  if (v.IsObject() && v.MemberCount() == 1) {
    if (const json::Value* e = json::find(v, "error"); e && e->IsObject()) return {true, json::clone(*e)};
  }
  return {false, json::clone(v)};
}

}  // namespace

void Inbox::preload(const json::Value& answers) {
  util::MutexLock lk(mu_);
  if (answers.IsObject())
    for (const auto& m : answers.GetObject())
      json::set(preloaded_, std::string_view(m.name.GetString(), m.name.GetStringLength()),
                json::copy(m.value, preloaded_.GetAllocator()), preloaded_.GetAllocator());
}

Task<upstream::Reply> Inbox::ask(std::string_view method, json::Document params, std::string key, std::size_t batch,
                                 std::uint64_t order, Clock::time_point deadline, CancelSignal& cancel) {
  Asked asked{Question{key, std::string(method), std::move(params)}, std::make_shared<Pending>(), order};
  auto pending = asked.pending;
  {
    util::MutexLock lk(mu_);
    if (const json::Value* known = json::find(preloaded_, key)) {
      json::set(given_, key, json::copy(*known, given_.GetAllocator()), given_.GetAllocator());
      co_return given(*known);
    }
    asked_.push_back(std::move(asked));
    batch_ = std::max(batch_, batch);
  }
  changed();
  bool gone = false;
  for (;;) {
    const auto seen = changed_.generation();
    {
      util::MutexLock lk(mu_);
      gone = gone_;
      if (pending->answer || cancel.cancelled() || gone) break;
    }
    if (!co_await changed_.wait(seen, deadline, &cancel)) break;
  }
  {
    util::MutexLock lk(mu_);
    std::erase_if(asked_, [&](const Asked& a) { return a.pending == pending; });
    gone = gone_;
    if (pending->answer) co_return std::move(*pending->answer);
  }
  if (gone) co_return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw: the client's call was abandoned");
  if (cancel.cancelled())
    co_return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw: the server withdrew " + std::string(method));
  co_return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw: the client did not retry with an answer to " +
                                                                std::string(method) + " (key " + key + ") in time");
}

Task<std::vector<Question>> Inbox::wait(std::function<bool()> finished, CancelSignal& cancel) {
  std::vector<Question> out;
  for (;;) {
    const auto seen = changed_.generation();
    {
      util::MutexLock lk(mu_);
      if (finished() || cancel.cancelled()) co_return out;
      if (asked_.size() >= batch_) {
        std::vector<const Asked*> sorted;
        for (const auto& a : asked_) sorted.push_back(&a);
        std::stable_sort(sorted.begin(), sorted.end(),
                         [](const Asked* x, const Asked* y) { return x->order < y->order; });
        for (const Asked* a : sorted) out.push_back(Question{a->q.key, a->q.method, json::clone(a->q.params)});
        // The next round's batch is announced by its own requests.
        batch_ = 1;
        co_return out;
      }
    }
    co_await changed_.wait(seen, Clock::time_point::max(), &cancel);
  }
}

void Inbox::wake() { changed_.notify(); }

std::vector<std::string> Inbox::answer(const json::Value& answers) {
  util::UniqueLock lk(mu_);
  std::vector<std::string> missing;
  for (auto& a : asked_) {
    const json::Value* value = answers.IsObject() ? json::find(answers, a.q.key) : nullptr;
    if (!value) {
      missing.push_back(a.q.key);
      continue;
    }
    json::set(given_, a.q.key, json::copy(*value, given_.GetAllocator()), given_.GetAllocator());
    a.pending->answer = given(*value);
  }
  // Answered questions are no longer pending, even before their askers wake.
  std::erase_if(asked_, [](const Asked& a) { return a.pending->answer.has_value(); });
  lk.unlock();
  changed();
  return missing;
}

std::vector<Question> Inbox::pending() const {
  util::MutexLock lk(mu_);
  std::vector<Question> out;
  for (const auto& a : asked_)
    if (!a.pending->answer) out.push_back(Question{a.q.key, a.q.method, json::clone(a.q.params)});
  return out;
}

void Inbox::watch(std::function<void()> fn) {
  util::MutexLock lk(mu_);
  watcher_ = std::move(fn);
}

void Inbox::changed() {
  changed_.notify();
  std::function<void()> fn;
  {
    util::MutexLock lk(mu_);
    fn = watcher_;
  }
  if (fn) fn();
}

json::Document Inbox::answers() const {
  util::MutexLock lk(mu_);
  return json::clone(given_);
}

void Inbox::abandon() {
  {
    util::MutexLock lk(mu_);
    gone_ = true;
  }
  changed_.notify();
}

Engine::Engine() = default;

Engine::~Engine() { drain(); }

std::shared_ptr<Parked> Engine::start(const asio::any_io_executor& ex, std::shared_ptr<Inbox> inbox,
                                      std::shared_ptr<upstream::ClientChannel> client, Work work) {
  {
    util::MutexLock lk(running_->mu);
    if (running_->stopping) return nullptr;
    ++running_->count;
  }
  auto p = std::make_shared<Parked>();
  p->id = random_hex(12);
  p->inbox = std::move(inbox);
  p->client = std::move(client);
  // Counted out however the coroutine ends, run to the end or destroyed
  // with the loop.
  // A constructor, not an aggregate: clang before 16 has no parenthesised
  // aggregate initialisation (make_shared<Counted>(running_)).
  struct Counted {
    explicit Counted(std::shared_ptr<Running> r) : running(std::move(r)) {}
    std::shared_ptr<Running> running;
    ~Counted() {
      util::MutexLock lk(running->mu);
      if (--running->count == 0) running->idle.notify_all();
    }
  };
  asio::co_spawn(
      asio::make_strand(ex),
      [p, work = std::move(work), counted = std::make_shared<Counted>(running_)]() -> Task<> {
        upstream::Reply result = co_await work(p->cancel);
        p->result = std::move(result);
        p->done.store(true);
        p->inbox->wake();
      },
      asio::detached);
  return p;
}

Task<std::vector<Question>> Engine::wait(std::shared_ptr<Parked> p, CancelSignal& request) {
  auto stop = request.on_cancel([p] { p->cancel.cancel(); });
  // Named, not a lambda inside the co_await expression: GCC 12 destroys
  // such a closure twice.
  std::function<bool()> finished = [p] { return p->done.load(); };
  co_return co_await p->inbox->wait(finished, request);
}

Engine::Outcome Engine::conclude(Parked& p, bool request_cancelled, std::vector<Question> questions) {
  if (p.done.load()) return std::move(p.result);
  if (request_cancelled) {
    p.inbox->abandon();
    return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw: the call was cancelled");
  }
  return questions;
}

std::shared_ptr<Parked> Engine::take(const json::Value& state) {
  auto id = json::get_string(state, "park");
  if (!id) return nullptr;
  util::MutexLock lk(mu_);
  auto it = parked_.find(std::string(*id));
  if (it == parked_.end()) return nullptr;
  auto p = std::move(it->second);
  parked_.erase(it);
  return p;
}

void Engine::abandon(Parked& p) {
  p.cancel.cancel();
  p.inbox->abandon();
}

Result<void> Engine::park(const std::shared_ptr<Parked>& p, std::chrono::seconds ttl) {
  p->expires = Clock::now() + ttl;
  util::MutexLock lk(mu_);
  // Calls never resumed give up their upstream request at expiry.
  for (auto it = parked_.begin(); it != parked_.end();) {
    if (it->second->expires < Clock::now() || it->second->done.load()) {
      abandon(*it->second);
      it = parked_.erase(it);
    } else {
      ++it;
    }
  }
  if (parked_.size() >= kMaxParked) {
    abandon(*p);
    return Error{"mcpgw: too many calls are waiting for client input; try again later"};
  }
  parked_[p->id] = p;
  return {};
}

bool Engine::first_resume(const std::string& id, std::int64_t expires) {
  util::MutexLock lk(mu_);
  auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::erase_if(resumed_, [&](const auto& e) { return e.second < now; });
  return resumed_.emplace(id, expires).second;
}

void Engine::abandon_parked() {
  std::map<std::string, std::shared_ptr<Parked>> parked;
  {
    util::MutexLock lk(mu_);
    parked.swap(parked_);
  }
  for (auto& [id, p] : parked) abandon(*p);
}

void Engine::drain() {
  {
    util::MutexLock lk(running_->mu);
    running_->stopping = true;
  }
  abandon_parked();
  util::UniqueLock lk(running_->mu);
  running_->idle.wait(lk.native(), [&]() REQUIRES(running_->mu) { return running_->count == 0; });
}

std::size_t Engine::parked_count() const {
  util::MutexLock lk(mu_);
  return parked_.size();
}

json::Value input_requests(const std::vector<Question>& questions, json::Allocator& a) {
  json::Value requests(rapidjson::kObjectType);
  for (const auto& q : questions) {
    json::Value req(rapidjson::kObjectType);
    req.AddMember("method", json::str(q.method, a), a);
    req.AddMember("params", json::copy(q.params, a), a);
    requests.AddMember(json::str(q.key, a), req, a);
  }
  return requests;
}

}  // namespace mcpgw::saga
