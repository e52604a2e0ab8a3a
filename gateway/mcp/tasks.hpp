#pragma once
// MCP tasks in both generations: the 2025-11-25 base-protocol tasks (a
// `task` param, CreateTaskResult `{task}`, tasks/get|result|list|cancel,
// `ttl` and `pollInterval`) and the 2026-07-28 extension
// `io.modelcontextprotocol/tasks` (SEP-2663: flat CreateTaskResult with
// `resultType: "task"`, tasks/get|update|cancel, results inlined in
// tasks/get, `ttlMs` and `pollIntervalMs`). The gateway reads a task in
// either shape into one TaskState and writes it in the shape each client
// speaks.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "jsonrpc/json.hpp"

namespace mcpgw::mcp {

/// The extension's identifier (2026-07-28).
inline constexpr std::string_view kTasksExtension = "io.modelcontextprotocol/tasks";
/// `_meta` key tying a message to its task (2025-11-25).
inline constexpr std::string_view kMetaRelatedTask = "io.modelcontextprotocol/related-task";

enum class TaskStatus { Working, InputRequired, Completed, Failed, Cancelled };

/// The wire name of `s` ("working", "input_required", ...).
std::string_view status_name(TaskStatus s);
std::optional<TaskStatus> parse_status(std::string_view name);
/// completed, failed and cancelled never change again.
bool is_terminal(TaskStatus s);

/// A task's state as either generation describes it (its payloads, the
/// result, error or input requests, travel separately).
struct TaskState {
  std::string task_id;
  TaskStatus status = TaskStatus::Working;
  std::string status_message;  ///< "" = none
  std::string created_at;      ///< ISO 8601
  std::string last_updated_at;
  std::optional<std::int64_t> ttl_ms;   ///< nullopt = unlimited (null)
  std::optional<std::int64_t> poll_ms;  ///< suggested polling interval
};

/// A task in any of its shapes: a 2025 Task, a 2025 CreateTaskResult
/// (`{task: Task}`), a 2026 CreateTaskResult or DetailedTask. Nullopt when
/// `v` is none of them (no string taskId, an unknown status).
std::optional<TaskState> read_task(const json::Value& v);
/// The task a result announces when it is a CreateTaskResult of either
/// generation, else nullopt (a plain result).
std::optional<TaskState> created_task(const json::Value& result);

/// The 2025-11-25 Task object.
json::Value task_object_2025(const TaskState& t, json::Allocator& a);
/// The 2025-11-25 CreateTaskResult: `{task: Task}`.
json::Document create_result_2025(const TaskState& t);
/// The 2026-07-28 Task fields at the top level of a new document: with
/// `create`, a CreateTaskResult (`resultType: "task"`); else the base of a
/// DetailedTask (tasks/get, notifications/tasks), to which the caller adds
/// `result`, `error` or `inputRequests`.
json::Document task_2026(const TaskState& t, bool create);


/// How a tool declares it may run as a task (`execution.taskSupport`;
/// absent = forbidden).
enum class TaskSupport { Forbidden, Optional, Required };
TaskSupport task_support(const json::Value& tool);

/// The client declared the tasks extension (2026-07-28) in `capabilities`.
bool declares_tasks_extension(const json::Value& capabilities);
/// The client (2025-11-25) accepts `method` (elicitation/create,
/// sampling/createMessage) as a task-augmented request.
bool accepts_task_request(const json::Value& capabilities, std::string_view method);
/// The `requiredCapabilities` of a -32021 for a client without the
/// extension: `{extensions: {"io.modelcontextprotocol/tasks": {}}}`.
json::Document tasks_extension_capability();

/// Sets `_meta["io.modelcontextprotocol/related-task"] = {taskId: id}` on
/// `params` (an object).
void set_related_task(json::Value& params, std::string_view id, json::Allocator& a);
/// The related task id in `params._meta`, if any.
std::optional<std::string> related_task(const json::Value& params);

}  // namespace mcpgw::mcp
