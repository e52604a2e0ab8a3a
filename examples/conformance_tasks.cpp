// The MCP tasks extension (2026-07-28, io.modelcontextprotocol/tasks,
// SEP-2663) as the conformance suite's `tasks-*` scenarios expect it of a
// server: tools the server decides to run as tasks for a request that
// declares the extension, and tasks/get, tasks/update and tasks/cancel.
// A task's state advances when it is looked at (a deadline passed, an
// answer arrived), so no thread runs behind it.
#include <chrono>
#include <map>
#include <optional>
#include <thread>

#include "conformance_fixture.hpp"
#include "mcp/tasks.hpp"
#include "util/iso8601.hpp"
#include "util/random.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::examples::conformance {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::int64_t kTtlMs = 60000;
constexpr std::int64_t kPollMs = 200;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The -32021 of a request that needs the tasks extension.
ex::RpcError needs_extension(std::string what) {
  return ex::RpcError{ex::kMissingClientCapability, "Missing required client capability: " + what,
                      R"({"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}})"};
}

/// One task: what it does decides how it ends.
struct FixtureTask {
  enum class Work { Compute, ToolError, ProtocolError, Confirm, TwoInputs, Greeting } work = Work::Compute;
  std::string id{};
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;
  Clock::time_point ready_at{};  ///< when the work is done (Compute, ToolError, ProtocolError, Greeting)
  std::string text{};            ///< the label, file name or user name it works on
  bool cancelled = false;
  /// Questions asked (key -> {method, params}) and answers given, by key.
  std::map<std::string, json::Document> questions{}, answers{};
};

class TaskStore {
 public:
  /// A new task (kept for kTtlMs), as the CreateTaskResult that announces it.
  json::Document create(FixtureTask t) {
    t.id = random_hex(16);
    t.created_ms = t.updated_ms = now_ms();
    util::MutexLock lock(mutex_);
    sweep();
    auto& stored = tasks_[t.id] = std::move(t);
    return mcp::task_2026(state(stored), true);
  }

  ex::Outcome get(const json::Value* params, bool stateless) {
    return with_task(params, stateless, [&](FixtureTask& t) -> ex::Outcome {
      mcp::TaskState st = state(t);
      json::Document out = mcp::task_2026(st, false);
      auto& a = out.GetAllocator();
      if (st.status == mcp::TaskStatus::InputRequired) {
        json::Value requests(rapidjson::kObjectType);
        for (const auto& [key, q] : t.questions)
          if (!t.answers.count(key)) json::set(requests, key, json::copy(q, a), a);
        out.AddMember("inputRequests", requests, a);
      } else if (st.status == mcp::TaskStatus::Completed) {
        out.AddMember("result", json::copy(result(t), a), a);
      } else if (st.status == mcp::TaskStatus::Failed) {
        out.AddMember("error", json::Value(*json::parse(R"({"code":-32603,"message":"protocol_error_job crashed as designed"})"), a), a);
      }
      return out;
    });
  }

  ex::Outcome update(const json::Value* params, bool stateless) {
    const json::Value* responses = params ? json::find(*params, "inputResponses") : nullptr;
    if (!responses || !responses->IsObject())
      return ex::RpcError{jsonrpc::kInvalidParams, "Invalid params: inputResponses must be an object"};
    return with_task(params, stateless, [&](FixtureTask& t) -> ex::Outcome {
      // Answers to questions not outstanding are ignored (SEP-2663).
      for (const auto& m : responses->GetObject()) {
        std::string key(m.name.GetString(), m.name.GetStringLength());
        if (t.questions.count(key) && !t.answers.count(key)) {
          t.answers[key] = json::clone(m.value);
          t.updated_ms = now_ms();
        }
      }
      return json::Document(rapidjson::kObjectType);
    });
  }

  ex::Outcome cancel(const json::Value* params, bool stateless) {
    return with_task(params, stateless, [&](FixtureTask& t) -> ex::Outcome {
      // Acknowledged however it stands; only a running task is stopped.
      if (!mcp::is_terminal(state(t).status)) {
        t.cancelled = true;
        t.updated_ms = now_ms();
      }
      return json::Document(rapidjson::kObjectType);
    });
  }

 private:
  template <typename Fn>
  ex::Outcome with_task(const json::Value* params, bool stateless, Fn fn) {
    // A 2026-07-28 request carries the client's capabilities in its _meta.
    const json::Value* meta = params ? json::find(*params, "_meta") : nullptr;
    const json::Value* caps = meta ? json::find(*meta, mcp::kMetaCapabilities) : nullptr;
    if (!stateless || !caps || !mcp::declares_tasks_extension(*caps))
      return needs_extension("tasks/* need the io.modelcontextprotocol/tasks extension");
    auto id = params ? json::get_string(*params, "taskId") : std::nullopt;
    if (!id) return ex::RpcError{jsonrpc::kInvalidParams, "Invalid params: taskId must be a string"};
    util::MutexLock lock(mutex_);
    sweep();
    auto it = tasks_.find(std::string(*id));
    if (it == tasks_.end()) return ex::RpcError{jsonrpc::kInvalidParams, "Failed to retrieve task: Task not found"};
    return fn(it->second);
  }

  static bool answered_all(const FixtureTask& t) { return t.answers.size() == t.questions.size(); }

  static mcp::TaskState state(const FixtureTask& t) {
    mcp::TaskState st;
    st.task_id = t.id;
    st.created_at = iso8601(t.created_ms);
    st.last_updated_at = iso8601(t.updated_ms);
    st.ttl_ms = kTtlMs;
    st.poll_ms = kPollMs;
    using W = FixtureTask::Work;
    bool asks = t.work == W::Confirm || t.work == W::TwoInputs;
    if (t.cancelled) st.status = mcp::TaskStatus::Cancelled;
    else if (asks) st.status = answered_all(t) ? mcp::TaskStatus::Completed : mcp::TaskStatus::InputRequired;
    else if (Clock::now() < t.ready_at) st.status = mcp::TaskStatus::Working;
    else st.status = t.work == W::ProtocolError ? mcp::TaskStatus::Failed : mcp::TaskStatus::Completed;
    return st;
  }

  static json::Document result(const FixtureTask& t) {
    using W = FixtureTask::Work;
    switch (t.work) {
      case W::ToolError: return mcp::tool_error("failing_job failed as designed");
      case W::Greeting: return ex::text_result("Hello, " + t.text + "! (from the task)");
      case W::Confirm:
        return ex::text_result("confirm_delete " + t.text + ": " + elicit_summary(t.answers.at("confirm")));
      case W::TwoInputs:
        return ex::text_result("multi_input: first " + accepted_field(t.answers.at("first"), "name") + ", second " +
                               accepted_field(t.answers.at("second"), "name"));
      default: return compute_result(t.text);
    }
  }

  /// A finished slow_compute: its text and a link to its report, a
  /// resource reference the gateway exposes in the task's result.
  static json::Document compute_result(const std::string& label) {
    json::Document r = ex::text_result("slow_compute " + label + " done");
    auto& a = r.GetAllocator();
    json::Value link(rapidjson::kObjectType);
    link.AddMember("type", "resource_link", a);
    link.AddMember("uri", json::str("test://tasks/report/" + label, a), a);
    link.AddMember("name", json::str("report " + label, a), a);
    r["content"].PushBack(link, a);
    return r;
  }

  /// Forgets tasks past their ttl.
  void sweep() REQUIRES(mutex_) {
    std::int64_t now = now_ms();
    std::erase_if(tasks_, [now](const auto& e) { return now - e.second.created_ms > kTtlMs; });
  }

  util::Mutex mutex_;
  std::map<std::string, FixtureTask> tasks_ GUARDED_BY(mutex_);
};

constexpr std::string_view kTaskConfirmSchema =
    R"({"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]})";
constexpr std::string_view kTaskNameSchema =
    R"({"type":"object","properties":{"name":{"type":"string"},"confirm":{"type":"boolean"}},"required":["name"]})";

json::Document question(std::string_view message, std::string_view schema) {
  json::Document q(rapidjson::kObjectType);
  auto& a = q.GetAllocator();
  q.AddMember("method", "elicitation/create", a);
  q.AddMember("params", json::copy(elicitation_params(message, schema), a), a);
  return q;
}

std::int64_t seconds_of(const json::Value& args) {
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(ex::get_number(args, "seconds").value_or(1)), 0, 120);
}

}  // namespace

void add_task_tools(ex::Server& server) {
  auto store = std::make_shared<TaskStore>();
  server.set_extension(std::string(mcp::kTasksExtension), "{}");
  server.add_method("tasks/get", [store](const json::Value* p, bool stateless) { return store->get(p, stateless); });
  server.add_method("tasks/update", [store](const json::Value* p, bool stateless) { return store->update(p, stateless); });
  server.add_method("tasks/cancel", [store](const json::Value* p, bool stateless) { return store->cancel(p, stateless); });
  auto tasks = [](ex::CallContext& ctx) { return ctx.stateless() && ctx.client_declares(mcp::kTasksExtension); };
  using W = FixtureTask::Work;

  server.add_tool({
      .name = "greet",
      .description = "Greets `name` at once; never a task.",
      .input_schema = R"({"type":"object","properties":{"name":{"type":"string"}}})",
      .handler = [](const json::Value& args) {
        return ex::text_result("Hello, " + std::string(json::get_string(args, "name").value_or("World")) + "!");
      },
  });
  server.add_tool({
      .name = "slow_compute",
      .description = "Works `seconds` seconds: a task for a client that declares the tasks extension, else an "
                     "ordinary call that takes that long.",
      .input_schema = R"({"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}})",
      .execution = R"({"taskSupport":"optional"})",
      .context_handler = [store, tasks](const json::Value& args, ex::CallContext& ctx) -> ex::ToolOutcome {
        std::string label(json::get_string(args, "label").value_or("job"));
        std::int64_t seconds = seconds_of(args);
        if (!tasks(ctx)) {
          std::this_thread::sleep_for(std::chrono::seconds(seconds));
          return ex::text_result("slow_compute " + label + " done");
        }
        return store->create({.work = W::Compute, .ready_at = Clock::now() + std::chrono::seconds(seconds), .text = label});
      },
  });
  server.add_tool({
      .name = "failing_job",
      .description = "A task that ends, after about a second, with a tool error (isError).",
      .execution = R"({"taskSupport":"required"})",
      .context_handler = [store, tasks](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        if (!tasks(ctx)) return needs_extension("failing_job runs only as a task");
        return store->create({.work = W::ToolError, .ready_at = Clock::now() + 1s});
      },
  });
  server.add_tool({
      .name = "protocol_error_job",
      .description = "A task that fails with a JSON-RPC error (a protocol-level failure).",
      .execution = R"({"taskSupport":"required"})",
      .context_handler = [store, tasks](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        if (!tasks(ctx)) return needs_extension("protocol_error_job runs only as a task");
        return store->create({.work = W::ProtocolError, .ready_at = Clock::now() + 200ms});
      },
  });
  server.add_tool({
      .name = "confirm_delete",
      .description = "Asks the user to confirm deleting `filename` (one elicitation), as a task's input.",
      .input_schema = R"({"type":"object","properties":{"filename":{"type":"string"}}})",
      .execution = R"({"taskSupport":"optional"})",
      .context_handler = [store, tasks](const json::Value& args, ex::CallContext& ctx) -> ex::ToolOutcome {
        std::string file(json::get_string(args, "filename").value_or("file"));
        std::string message = "Delete " + file + "?";
        if (!tasks(ctx))
          return ask_client(ctx, "confirm", "elicitation/create", elicitation_params(message, kTaskConfirmSchema),
                            [&](const json::Value& r) { return "confirm_delete " + file + ": " + elicit_summary(r); });
        FixtureTask t{.work = W::Confirm, .text = file};
        t.questions.emplace("confirm", question(message, kTaskConfirmSchema));
        return store->create(std::move(t));
      },
  });
  server.add_tool({
      .name = "multi_input",
      .description = "Asks two questions at once (keys first and second), as a task's input.",
      .execution = R"({"taskSupport":"optional"})",
      .context_handler = [store, tasks](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        if (!tasks(ctx)) {
          ex::InputAnswers answers = ctx.request_all({
              {.key = "first", .method = "elicitation/create", .params = elicitation_params("First name?", kTaskNameSchema)},
              {.key = "second", .method = "elicitation/create", .params = elicitation_params("Second name?", kTaskNameSchema)},
          });
          for (auto& [key, answer] : answers)
            if (auto* err = std::get_if<ex::RpcError>(&answer)) return std::move(*err);
          return ex::text_result("multi_input: first " + accepted_field(std::get<json::Document>(answers.at("first")), "name") +
                                 ", second " + accepted_field(std::get<json::Document>(answers.at("second")), "name"));
        }
        FixtureTask t{.work = W::TwoInputs};
        t.questions.emplace("first", question("First name?", kTaskNameSchema));
        t.questions.emplace("second", question("Second name?", kTaskNameSchema));
        return store->create(std::move(t));
      },
  });
  server.add_tool({
      .name = "test_tool_with_task",
      .description = "Asks the user's name first (input_required, key user_name), then runs as a task whose "
                     "result greets them.",
      .execution = R"({"taskSupport":"required"})",
      .context_handler = [store, tasks](const json::Value&, ex::CallContext& ctx) -> ex::ToolOutcome {
        if (!tasks(ctx)) return needs_extension("test_tool_with_task runs only as a task");
        ex::Outcome answer = ctx.request(
            "elicitation/create",
            elicitation_params("What is your name?", R"({"type":"object","properties":{"name":{"type":"string"}},"required":["name"]})"),
            "user_name");
        if (auto* err = std::get_if<ex::RpcError>(&answer)) return std::move(*err);
        std::string name = accepted_field(std::get<json::Document>(answer), "name");
        return store->create({.work = W::Greeting, .ready_at = Clock::now() + 300ms, .text = name});
      },
  });
}

}  // namespace mcpgw::examples::conformance
