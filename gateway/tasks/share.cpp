#include "tasks/share.hpp"

#include <spdlog/spdlog.h>

#include "tasks/state.hpp"

namespace mcpgw::tasks {
namespace {

using Clock = std::chrono::steady_clock;

/// Waits for a Cluster operation that reports to a callback (always, within
/// its Redis timeout).
template <typename T>
Task<Result<T>> awaited(const std::function<void(std::function<void(Result<T>)>)>& start) {
  struct State {
    util::Mutex mu;
    std::optional<Result<T>> result GUARDED_BY(mu);
    Event done;
  };
  auto st = std::make_shared<State>();
  start([st](Result<T> r) {
    {
      util::MutexLock lk(st->mu);
      st->result.emplace(std::move(r));
    }
    st->done.notify();
  });
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  for (;;) {
    const auto seen = st->done.generation();
    {
      util::MutexLock lk(st->mu);
      if (st->result) co_return std::move(*st->result);
    }
    if (!co_await st->done.wait(seen, deadline)) co_return Error{"Redis did not answer in time"};
  }
}

}  // namespace

json::Document shared_state(const TaskRecord& rec) {
  mcp::TaskState st = run_state(rec, true);
  json::Document out = state_document(st, true);
  auto& a = out.GetAllocator();
  if (st.status == mcp::TaskStatus::InputRequired)
    json::set(out, "inputRequests", saga::input_requests(rec.run->inbox()->pending(), a), a);
  else if (st.status == mcp::TaskStatus::Completed || st.status == mcp::TaskStatus::Failed)
    add_outcome(out, rec.run->result());
  return out;
}

mcp::TaskState state_2025(const json::Value& shared) {
  mcp::TaskState st = mcp::read_task(shared).value_or(mcp::TaskState{});
  const json::Value* result = json::find(shared, "result");
  const json::Value* is_error = result ? json::find(*result, "isError") : nullptr;
  if (st.status == mcp::TaskStatus::Completed && is_error && is_error->IsTrue()) st.status = mcp::TaskStatus::Failed;
  return st;
}

Task<Result<void>> TaskShare::put_new(const TaskRecord& rec) {
  if (!on()) co_return Result<void>{};
  std::string state = json::write(shared_state(rec));
  co_return co_await awaited<void>([&](std::function<void(Result<void>)> done) {
    cluster_->put_task(rec.id, rec.ref.principal, std::move(state), rec.ref.expires_ms / 1000 + 1, true,
                       std::move(done));
  });
}

void TaskShare::put(const TaskRecord& rec) {
  if (!on()) return;
  cluster_->put_task(rec.id, rec.ref.principal, json::write(shared_state(rec)), rec.ref.expires_ms / 1000 + 1, false,
                     [id = rec.id](Result<void> r) {
                       if (!r) spdlog::warn("task {}: its state did not reach Redis: {}", id.substr(0, 16), r.error());
                     });
}

void TaskShare::list(const TaskRecord& rec) {
  if (!on()) return;
  std::int64_t expires = (rec.ref.expires_ms ? rec.ref.expires_ms : rec.keep_until_ms) / 1000 + 1;
  cluster_->list_task(rec.id, rec.ref.principal, expires);
}

Task<std::optional<json::Document>> TaskShare::get(const std::string& id) {
  if (!on()) co_return std::nullopt;
  auto text = co_await awaited<std::string>(
      [&](std::function<void(Result<std::string>)> done) { cluster_->get_task(id, std::move(done)); });
  if (!text) {
    spdlog::warn("task {}: cannot read its state: {}", id.substr(0, 16), text.error());
    co_return std::nullopt;
  }
  auto doc = text->empty() ? Result<json::Document>(Error{"none"}) : json::parse(*text);
  if (!doc) co_return std::nullopt;
  co_return std::move(*doc);
}

Task<std::vector<std::string>> TaskShare::ids_of(const std::string& principal) {
  if (!on()) co_return std::vector<std::string>{};
  auto ids = co_await awaited<std::vector<std::string>>(
      [&](std::function<void(Result<std::vector<std::string>>)> done) { cluster_->tasks_of(principal, std::move(done)); });
  if (!ids) {
    spdlog::warn("tasks/list: cannot read the cluster's tasks: {}", ids.error());
    co_return std::vector<std::string>{};
  }
  co_return std::move(*ids);
}

void TaskShare::answer(const std::string& id, const json::Value& answers) {
  if (on()) cluster_->to_task(id, "answers", json::write(answers));
}

void TaskShare::cancel(const std::string& id) {
  if (on()) cluster_->to_task(id, "cancel");
}

Task<> TaskShare::changed(const std::string& id, Clock::time_point deadline, CancelSignal& cancel) {
  std::string digest = cluster::digest_of(id);
  std::shared_ptr<Event> ev;
  {
    util::MutexLock lk(mu_);
    auto& slot = changes_[digest];
    if (!slot) slot = std::make_shared<Event>();
    ev = slot;
  }
  co_await ev->wait(ev->generation(), deadline, &cancel);
  util::MutexLock lk(mu_);
  // The last waiter takes the entry with it.
  if (auto it = changes_.find(digest); it != changes_.end() && it->second.use_count() <= 2) changes_.erase(it);
}

void TaskShare::on_event(const std::string& digest, const std::string& kind, const std::string& payload) {
  if (kind == "task") {
    std::shared_ptr<Event> ev;
    {
      util::MutexLock lk(mu_);
      if (auto it = changes_.find(digest); it != changes_.end()) ev = it->second;
    }
    if (ev) ev->notify();
    return;
  }
  auto rec = registry_.by_digest(digest);
  auto run = rec ? registry_.run_of(*rec) : nullptr;
  if (!run) return;
  if (kind == "cancel") {
    run->cancel();
  } else if (auto answers = json::parse(payload); answers && answers->IsObject()) {
    run->inbox()->answer(*answers);
  }
}

}  // namespace mcpgw::tasks
