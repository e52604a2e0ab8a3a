#pragma once
// What a task the gateway runs looks like to clients: its state in each
// generation (2025-11-25 Task, 2026-07-28 DetailedTask) and its outcome.
#include <cstdint>

#include "mcp/tasks.hpp"
#include "tasks/registry.hpp"
#include "upstream/upstream.hpp"

namespace mcpgw::tasks {

/// The polling interval the gateway suggests for the tasks it runs.
inline constexpr std::int64_t kPollMs = 1000;

/// The state of a task the gateway runs (`rec.run`), as a client of the
/// stateless revision (`modern`) or of the session revisions sees it: a
/// tool error is `completed` for the one and `failed` for the other.
mcp::TaskState run_state(const TaskRecord& rec, bool modern);
/// A task state in the client's generation: a 2025-11-25 Task, or the base
/// of a 2026-07-28 DetailedTask.
json::Document state_document(const mcp::TaskState& t, bool modern);
/// Inlines a finished task's outcome into a 2026-07-28 DetailedTask:
/// `result` (without related-task `_meta`) or `error`.
void add_outcome(json::Document& detailed, const upstream::Reply& outcome);

}  // namespace mcpgw::tasks
