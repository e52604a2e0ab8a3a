#include "tasks/state.hpp"

#include "util/iso8601.hpp"

namespace mcpgw::tasks {

mcp::TaskState run_state(const TaskRecord& rec, bool modern) {
  const TaskRun& run = *rec.run;
  mcp::TaskState t;
  t.task_id = rec.id;
  t.created_at = iso8601(rec.ref.created_ms);
  t.last_updated_at = iso8601(rec.updated_ms.load());
  t.ttl_ms = rec.ref.expires_ms - rec.ref.created_ms;
  t.poll_ms = kPollMs;
  if (run.cancelled()) {
    t.status = mcp::TaskStatus::Cancelled;
    t.status_message = "cancelled by the client";
  } else if (run.finished()) {
    upstream::Reply r = run.result();
    const json::Value* is_error = r.rpc_error ? nullptr : json::find(r.body, "isError");
    bool tool_error = is_error && is_error->IsTrue();
    t.status = r.rpc_error || (tool_error && !modern) ? mcp::TaskStatus::Failed : mcp::TaskStatus::Completed;
    if (r.rpc_error) t.status_message = std::string(json::get_string(r.body, "message").value_or(""));
  } else if (!run.inbox()->pending().empty()) {
    t.status = mcp::TaskStatus::InputRequired;
    t.status_message = "waiting for the client's input";
  }
  return t;
}

json::Document state_document(const mcp::TaskState& t, bool modern) {
  if (modern) return mcp::task_2026(t, false);
  json::Document d;
  json::Value v = mcp::task_object_2025(t, d.GetAllocator());
  static_cast<json::Value&>(d) = v;
  return d;
}

void add_outcome(json::Document& detailed, const upstream::Reply& outcome) {
  auto& a = detailed.GetAllocator();
  if (outcome.rpc_error) {
    json::set(detailed, "error", json::copy(outcome.body, a), a);
    return;
  }
  json::Value result(outcome.body, a);
  // The task's id is at the top of tasks/get already (SEP-2663).
  if (json::Value* meta = json::find(result, "_meta"); meta && meta->IsObject()) {
    meta->RemoveMember(std::string(mcp::kMetaRelatedTask).c_str());
    if (meta->ObjectEmpty()) result.RemoveMember("_meta");
  }
  json::set(detailed, "result", std::move(result), a);
}

}  // namespace mcpgw::tasks
