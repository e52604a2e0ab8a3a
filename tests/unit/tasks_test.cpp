// MCP tasks: reading and writing a task in either generation (mcp/tasks),
// the registry of tasks a process created (tasks/registry) and a
// run the gateway makes for a task (tasks/run).
#include <doctest/doctest.h>

#include "loop.hpp"
#include "mcp/tasks.hpp"
#include "tasks/registry.hpp"
#include "tasks/run.hpp"
#include "util/iso8601.hpp"

using namespace mcpgw;

namespace {

json::Document doc(std::string_view text) { return std::move(*json::parse(text)); }

}  // namespace

TEST_CASE("tasks: a task is read in every shape either generation gives it") {
  auto v1 = doc(R"({"task":{"taskId":"t1","status":"working","createdAt":"2025-11-25T10:30:00Z",
                   "lastUpdatedAt":"2025-11-25T10:40:00Z","ttl":60000,"pollInterval":5000,"statusMessage":"busy"}})");
  auto created = mcp::created_task(v1);
  REQUIRE(created);
  CHECK(created->task_id == "t1");
  CHECK(created->status == mcp::TaskStatus::Working);
  CHECK(created->ttl_ms == 60000);
  CHECK(created->poll_ms == 5000);
  CHECK(created->status_message == "busy");
  CHECK(created->last_updated_at == "2025-11-25T10:40:00Z");

  auto v2 = doc(R"({"resultType":"task","taskId":"t2","status":"input_required","createdAt":"2026-01-01T00:00:00Z",
                   "lastUpdatedAt":"2026-01-01T00:00:01Z","ttlMs":null,"pollIntervalMs":200})");
  created = mcp::created_task(v2);
  REQUIRE(created);
  CHECK(created->status == mcp::TaskStatus::InputRequired);
  CHECK_FALSE(created->ttl_ms);
  CHECK(created->poll_ms == 200);

  // A plain result is no task; neither is a task without an id or with an
  // unknown status.
  CHECK_FALSE(mcp::created_task(doc(R"({"content":[],"resultType":"complete"})")));
  CHECK_FALSE(mcp::created_task(doc(R"({"task":{"status":"working"}})")));
  CHECK_FALSE(mcp::read_task(doc(R"({"taskId":"x","status":"sleeping"})")));
  // tasks/get of either generation.
  CHECK(mcp::read_task(doc(R"({"taskId":"x","status":"completed","result":{}})"))->status == mcp::TaskStatus::Completed);
}

TEST_CASE("tasks: each generation's shape is written as its schema says") {
  mcp::TaskState t;
  t.task_id = "gw";
  t.status = mcp::TaskStatus::Failed;
  t.created_at = iso8601(1764000000123);
  t.last_updated_at = t.created_at;
  t.ttl_ms = 3600000;
  t.poll_ms = 1000;
  CHECK(t.created_at == "2025-11-24T16:00:00.123Z");
  CHECK(json::write(mcp::create_result_2025(t)) ==
        R"({"task":{"taskId":"gw","status":"failed","createdAt":"2025-11-24T16:00:00.123Z",)"
        R"("lastUpdatedAt":"2025-11-24T16:00:00.123Z","ttl":3600000,"pollInterval":1000}})");
  CHECK(json::write(mcp::task_2026(t, true)) ==
        R"({"resultType":"task","taskId":"gw","status":"failed","createdAt":"2025-11-24T16:00:00.123Z",)"
        R"("lastUpdatedAt":"2025-11-24T16:00:00.123Z","ttlMs":3600000,"pollIntervalMs":1000})");
  t.ttl_ms.reset();
  t.poll_ms.reset();
  t.status_message = "why";
  CHECK(json::write(mcp::task_2026(t, false)) ==
        R"({"taskId":"gw","status":"failed","statusMessage":"why","createdAt":"2025-11-24T16:00:00.123Z",)"
        R"("lastUpdatedAt":"2025-11-24T16:00:00.123Z","ttlMs":null})");
  for (auto s : {mcp::TaskStatus::Working, mcp::TaskStatus::InputRequired, mcp::TaskStatus::Completed,
                 mcp::TaskStatus::Failed, mcp::TaskStatus::Cancelled})
    CHECK(mcp::parse_status(mcp::status_name(s)) == s);
  CHECK(mcp::is_terminal(mcp::TaskStatus::Cancelled));
  CHECK_FALSE(mcp::is_terminal(mcp::TaskStatus::InputRequired));
}

TEST_CASE("tasks: tool support, the client's declarations, related-task") {
  CHECK(mcp::task_support(doc(R"({"name":"t"})")) == mcp::TaskSupport::Forbidden);
  CHECK(mcp::task_support(doc(R"({"execution":{"taskSupport":"required"}})")) == mcp::TaskSupport::Required);
  CHECK(mcp::task_support(doc(R"({"execution":{"taskSupport":"optional"}})")) == mcp::TaskSupport::Optional);
  CHECK(mcp::task_support(doc(R"({"execution":{"taskSupport":"sometimes"}})")) == mcp::TaskSupport::Forbidden);

  CHECK(mcp::declares_tasks_extension(doc(R"({"extensions":{"io.modelcontextprotocol/tasks":{}}})")));
  CHECK_FALSE(mcp::declares_tasks_extension(doc(R"({"tasks":{}})")));
  CHECK_FALSE(mcp::declares_tasks_extension(doc(R"({"extensions":{"io.modelcontextprotocol/tasks":true}})")));

  auto caps = doc(R"({"tasks":{"requests":{"elicitation":{"create":{}}}}})");
  CHECK(mcp::accepts_task_request(caps, "elicitation/create"));
  CHECK_FALSE(mcp::accepts_task_request(caps, "sampling/createMessage"));
  CHECK_FALSE(mcp::accepts_task_request(doc("{}"), "elicitation/create"));

  auto params = doc(R"({"message":"hi","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up"}}})");
  CHECK(mcp::related_task(params) == "up");
  mcp::set_related_task(params, "gw", params.GetAllocator());
  CHECK(mcp::related_task(params) == "gw");
  auto bare = doc(R"({"message":"hi"})");
  CHECK_FALSE(mcp::related_task(bare));
  mcp::set_related_task(bare, "gw", bare.GetAllocator());
  CHECK(json::write(bare) == R"({"message":"hi","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"gw"}}})");
}

TEST_CASE("task registry: a principal holds at most max tasks; its ids open for it alone") {
  tasks::TaskRegistry registry({"secret"});
  cluster::TaskRef ref;
  ref.kind = cluster::TaskRef::Kind::Upstream;
  ref.principal = "alice";
  ref.server = "everything";
  ref.created_ms = tasks::unix_ms();
  ref.expires_ms = ref.created_ms + 60000;

  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    auto slot = registry.reserve("alice", 2);
    REQUIRE(std::holds_alternative<tasks::TaskRegistry::Slot>(slot));
    ref.upstream_id = "up-" + std::to_string(i);
    auto added = registry.add(std::move(std::get<tasks::TaskRegistry::Slot>(slot)), ref, "session", nullptr);
    REQUIRE(added.ok());
    ids.push_back((*added)->id);
  }
  auto full = registry.reserve("alice", 2);
  REQUIRE(std::holds_alternative<std::int64_t>(full));
  CHECK(std::get<std::int64_t>(full) > 50000);  // until the first expires
  CHECK(std::holds_alternative<tasks::TaskRegistry::Slot>(registry.reserve("bob", 2)));
  {
    // A slot not used for a task is given back.
    auto slot = registry.reserve("carol", 1);
    CHECK(std::holds_alternative<std::int64_t>(registry.reserve("carol", 1)));
  }
  CHECK(std::holds_alternative<tasks::TaskRegistry::Slot>(registry.reserve("carol", 1)));

  auto opened = registry.open(ids[0], "alice");
  REQUIRE(std::holds_alternative<tasks::TaskRegistry::Opened>(opened));
  CHECK(std::get<tasks::TaskRegistry::Opened>(opened).ref.upstream_id == "up-0");
  CHECK(std::get<tasks::TaskRegistry::Opened>(opened).local->id == ids[0]);
  CHECK(std::get<tasks::TaskRefusal>(registry.open(ids[0], "bob")) == tasks::TaskRefusal::NotFound);
  CHECK(std::get<tasks::TaskRefusal>(registry.open("mt1" + ids[0].substr(4), "alice")) == tasks::TaskRefusal::NotFound);
  CHECK(registry.by_upstream("everything", "up-1")->id == ids[1]);
  CHECK(registry.by_digest(registry.by_upstream("everything", "up-1")->digest)->id == ids[1]);
  CHECK(registry.of("alice").size() == 2);
  CHECK(registry.of("bob").empty());

  // An expired id says so, to its principal only.
  ref.upstream_id = "old";
  ref.created_ms -= 120000;
  ref.expires_ms = ref.created_ms + 1000;
  auto old = registry.id_of(ref);
  REQUIRE(old.ok());
  CHECK(std::get<tasks::TaskRefusal>(registry.open(*old, "alice")) == tasks::TaskRefusal::Expired);
  CHECK(std::get<tasks::TaskRefusal>(registry.open(*old, "bob")) == tasks::TaskRefusal::NotFound);

  // Another process with the same secret opens the ids (no local record).
  tasks::TaskRegistry replica({"secret"});
  auto there = replica.open(ids[1], "alice");
  REQUIRE(std::holds_alternative<tasks::TaskRegistry::Opened>(there));
  CHECK_FALSE(std::get<tasks::TaskRegistry::Opened>(there).local);
}

TEST_CASE("task run: a run the engine refuses to start ends failed, and its watcher hears it") {
  testing::Loop loop;
  saga::Engine engine;
  engine.drain();  // shutting down: nothing starts any more
  auto run = std::make_shared<tasks::TaskRun>();
  int heard = 0;
  run->watch([&heard] { ++heard; });
  bool ran = false;
  bool started = run->start(engine, loop.executor(), nullptr, [&ran](CancelSignal&) -> Task<upstream::Reply> {
    ran = true;
    co_return upstream::Reply{};
  });
  REQUIRE_FALSE(started);
  CHECK_FALSE(run->finished());
  run->finish(upstream::Reply::error(jsonrpc::kInternalError, "mcpgw is shutting down"));
  CHECK(run->finished());
  CHECK(heard == 1);
  CHECK_FALSE(ran);
  upstream::Reply result = run->result();
  CHECK(result.rpc_error);
  CHECK(json::write(result.body).find("mcpgw is shutting down") != std::string::npos);
}
