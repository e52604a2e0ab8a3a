#include "mcp/tasks.hpp"

#include <array>
#include <chrono>
#include <utility>

namespace mcpgw::mcp {
namespace {

constexpr std::array<std::pair<std::string_view, TaskStatus>, 5> kStatuses{{
    {"working", TaskStatus::Working},
    {"input_required", TaskStatus::InputRequired},
    {"completed", TaskStatus::Completed},
    {"failed", TaskStatus::Failed},
    {"cancelled", TaskStatus::Cancelled},
}};

/// An integer member (either generation's name for it), or nullopt when it
/// is absent, null or not a number.
std::optional<std::int64_t> integer(const json::Value& v, std::string_view key, std::string_view old_key) {
  const json::Value* n = json::find(v, key);
  if (!n) n = json::find(v, old_key);
  if (!n || !n->IsNumber()) return std::nullopt;
  return n->IsInt64() ? n->GetInt64() : static_cast<std::int64_t>(n->GetDouble());
}

}  // namespace

std::string_view status_name(TaskStatus s) {
  for (const auto& [name, status] : kStatuses)
    if (status == s) return name;
  return "working";
}

std::optional<TaskStatus> parse_status(std::string_view name) {
  for (const auto& [n, status] : kStatuses)
    if (n == name) return status;
  return std::nullopt;
}

bool is_terminal(TaskStatus s) {
  return s == TaskStatus::Completed || s == TaskStatus::Failed || s == TaskStatus::Cancelled;
}

std::optional<TaskState> read_task(const json::Value& v) {
  if (!v.IsObject()) return std::nullopt;
  if (const json::Value* inner = json::find(v, "task"); inner && inner->IsObject()) return read_task(*inner);
  auto id = json::get_string(v, "taskId");
  auto status = json::get_string(v, "status");
  auto parsed = status ? parse_status(*status) : std::nullopt;
  if (!id || !parsed) return std::nullopt;
  TaskState t;
  t.task_id = std::string(*id);
  t.status = *parsed;
  t.status_message = std::string(json::get_string(v, "statusMessage").value_or(""));
  t.created_at = std::string(json::get_string(v, "createdAt").value_or(""));
  t.last_updated_at = std::string(json::get_string(v, "lastUpdatedAt").value_or(t.created_at));
  t.ttl_ms = integer(v, "ttlMs", "ttl");
  t.poll_ms = integer(v, "pollIntervalMs", "pollInterval");
  return t;
}

std::optional<TaskState> created_task(const json::Value& result) {
  if (!result.IsObject()) return std::nullopt;
  if (auto type = json::get_string(result, "resultType"); type && *type == "task") return read_task(result);
  const json::Value* inner = json::find(result, "task");
  if (!inner || !inner->IsObject()) return std::nullopt;
  return read_task(*inner);
}

json::Value task_object_2025(const TaskState& t, json::Allocator& a) {
  json::Value o(rapidjson::kObjectType);
  o.AddMember("taskId", json::str(t.task_id, a), a);
  o.AddMember("status", json::str(status_name(t.status), a), a);
  if (!t.status_message.empty()) o.AddMember("statusMessage", json::str(t.status_message, a), a);
  o.AddMember("createdAt", json::str(t.created_at, a), a);
  o.AddMember("lastUpdatedAt", json::str(t.last_updated_at, a), a);
  if (t.ttl_ms) o.AddMember("ttl", json::Value(static_cast<int64_t>(*t.ttl_ms)), a);
  else o.AddMember("ttl", json::Value(rapidjson::kNullType), a);
  if (t.poll_ms) o.AddMember("pollInterval", json::Value(static_cast<int64_t>(*t.poll_ms)), a);
  return o;
}

json::Document create_result_2025(const TaskState& t) {
  json::Document d(rapidjson::kObjectType);
  d.AddMember("task", task_object_2025(t, d.GetAllocator()), d.GetAllocator());
  return d;
}

json::Document task_2026(const TaskState& t, bool create) {
  json::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  if (create) d.AddMember("resultType", "task", a);
  d.AddMember("taskId", json::str(t.task_id, a), a);
  d.AddMember("status", json::str(status_name(t.status), a), a);
  if (!t.status_message.empty()) d.AddMember("statusMessage", json::str(t.status_message, a), a);
  d.AddMember("createdAt", json::str(t.created_at, a), a);
  d.AddMember("lastUpdatedAt", json::str(t.last_updated_at, a), a);
  if (t.ttl_ms) d.AddMember("ttlMs", json::Value(static_cast<int64_t>(*t.ttl_ms)), a);
  else d.AddMember("ttlMs", json::Value(rapidjson::kNullType), a);
  if (t.poll_ms) d.AddMember("pollIntervalMs", json::Value(static_cast<int64_t>(*t.poll_ms)), a);
  return d;
}

TaskSupport task_support(const json::Value& tool) {
  const json::Value* execution = json::find(tool, "execution");
  auto support = execution ? json::get_string(*execution, "taskSupport") : std::nullopt;
  if (support == "optional") return TaskSupport::Optional;
  if (support == "required") return TaskSupport::Required;
  return TaskSupport::Forbidden;
}

bool declares_tasks_extension(const json::Value& capabilities) {
  const json::Value* extensions = json::find(capabilities, "extensions");
  const json::Value* tasks = extensions ? json::find(*extensions, kTasksExtension) : nullptr;
  return tasks && tasks->IsObject();
}

bool accepts_task_request(const json::Value& capabilities, std::string_view method) {
  const json::Value* tasks = json::find(capabilities, "tasks");
  const json::Value* requests = tasks ? json::find(*tasks, "requests") : nullptr;
  auto slash = method.find('/');
  if (!requests || slash == std::string_view::npos) return false;
  const json::Value* category = json::find(*requests, method.substr(0, slash));
  return category && json::find(*category, method.substr(slash + 1));
}

json::Document tasks_extension_capability() {
  json::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  json::Value extensions(rapidjson::kObjectType);
  extensions.AddMember(json::ref(kTasksExtension), json::Value(rapidjson::kObjectType), a);
  d.AddMember("extensions", extensions, a);
  return d;
}

void set_related_task(json::Value& params, std::string_view id, json::Allocator& a) {
  json::Value* meta = &json::object_member(params, "_meta", a);
  json::Value related(rapidjson::kObjectType);
  related.AddMember("taskId", json::str(id, a), a);
  json::set(*meta, kMetaRelatedTask, std::move(related), a);
}

std::optional<std::string> related_task(const json::Value& params) {
  const json::Value* meta = json::find(params, "_meta");
  const json::Value* related = meta ? json::find(*meta, kMetaRelatedTask) : nullptr;
  auto id = related ? json::get_string(*related, "taskId") : std::nullopt;
  if (!id) return std::nullopt;
  return std::string(*id);
}

}  // namespace mcpgw::mcp
