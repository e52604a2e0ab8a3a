#include <doctest/doctest.h>

#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "loop.hpp"
#include "mcp/codec.hpp"
#include "saga/engine.hpp"

using namespace mcpgw;

namespace {

jsonrpc::Message request(const char* text) {
  auto doc = json::parse(text);
  REQUIRE(doc);
  auto m = jsonrpc::Message::from(std::move(*doc));
  REQUIRE(m);
  return std::move(*m);
}

json::Document object(const char* text) {
  auto doc = json::parse(text);
  REQUIRE(doc);
  return std::move(*doc);
}

/// Work that asks one question and answers with what it was told.
saga::Engine::Work asking(std::shared_ptr<saga::Inbox> inbox) {
  return [inbox](CancelSignal& cancel) -> Task<upstream::Reply> {
    auto answer = co_await inbox->ask("elicitation/create", object(R"({"message":"sure?"})"), "q1", 1, 0,
                                      saga::Clock::now() + std::chrono::seconds(10), cancel);
    upstream::Reply r{answer.rpc_error, json::Document(rapidjson::kObjectType)};
    r.body.AddMember("told", json::Value(answer.body, r.body.GetAllocator()), r.body.GetAllocator());
    co_return r;
  };
}

}  // namespace

TEST_CASE("saga engine: a call that asks is parked, taken by its state and resumed with the answer") {
  testing::Loop loop;
  saga::Engine engine;
  auto inbox = std::make_shared<saga::Inbox>();
  auto p = engine.start(loop.executor(), inbox, nullptr, asking(inbox));
  REQUIRE(p);
  CancelSignal request1;
  auto outcome = engine.conclude(*p, false, loop.run(engine.wait(p, request1)));
  auto* questions = std::get_if<std::vector<saga::Question>>(&outcome);
  REQUIRE(questions);
  REQUIRE(questions->size() == 1);
  CHECK(questions->front().key == "q1");
  CHECK(questions->front().method == "elicitation/create");
  REQUIRE(engine.park(p, std::chrono::seconds(60)));

  json::Document state(rapidjson::kObjectType);
  state.AddMember("park", json::str(p->id, state.GetAllocator()), state.GetAllocator());
  auto resumed = engine.take(state);
  REQUIRE(resumed == p);
  CHECK(engine.take(state) == nullptr);  // taken once
  CHECK(resumed->inbox->answer(object(R"({"q1":{"action":"accept"}})")).empty());
  CancelSignal request2;
  outcome = engine.conclude(*resumed, false, loop.run(engine.wait(resumed, request2)));
  auto* done = std::get_if<upstream::Reply>(&outcome);
  REQUIRE(done);
  CHECK(!done->rpc_error);
  CHECK(json::write(done->body) == R"({"told":{"action":"accept"}})");
  CHECK(json::write(resumed->inbox->answers()) == R"({"q1":{"action":"accept"}})");
}

TEST_CASE("saga engine: a replay answers from preloaded answers, an error answer reaches the asker as one") {
  testing::Loop loop;
  saga::Engine engine;
  auto inbox = std::make_shared<saga::Inbox>();
  inbox->preload(object(R"({"q1":{"error":{"code":-1,"message":"no"}}})"));
  auto p = engine.start(loop.executor(), inbox, nullptr, asking(inbox));
  REQUIRE(p);
  CancelSignal request;
  auto outcome = engine.conclude(*p, false, loop.run(engine.wait(p, request)));
  auto* done = std::get_if<upstream::Reply>(&outcome);
  REQUIRE(done);
  CHECK(done->rpc_error);
  CHECK(json::write(done->body) == R"({"told":{"code":-1,"message":"no"}})");
}

TEST_CASE("saga engine: a cancelled request abandons its call") {
  testing::Loop loop;
  saga::Engine engine;
  auto inbox = std::make_shared<saga::Inbox>();
  auto p = engine.start(loop.executor(), inbox, nullptr, asking(inbox));
  REQUIRE(p);
  CancelSignal request;
  request.cancel();
  auto outcome = engine.conclude(*p, request.cancelled(), loop.run(engine.wait(p, request)));
  auto* failed = std::get_if<upstream::Reply>(&outcome);
  REQUIRE(failed);
  CHECK(failed->rpc_error);
  engine.drain();
  CHECK(p->done.load());
}

TEST_CASE("saga engine: a batch is handed out in the order the upstream sent it, whatever order it arrives in") {
  testing::Loop loop;
  for (int round = 0; round < 20; ++round) {
    saga::Inbox inbox;
    CancelSignal never;
    auto deadline = saga::Clock::now() + std::chrono::seconds(10);
    // Two relays on strands of their own, either of which may reach the
    // inbox first.
    std::atomic<int> asked{0};
    auto ask = [&](const char* method, const char* key, std::uint64_t order) -> Task<> {
      co_await inbox.ask(method, object("{}"), key, 2, order, deadline, never);
      ++asked;
    };
    asio::co_spawn(loop.strand(), ask("sampling/createMessage", "second", 2), asio::detached);
    asio::co_spawn(loop.strand(), ask("elicitation/create", "first", 1), asio::detached);
    CancelSignal cancel;
    auto questions = loop.run(inbox.wait([] { return false; }, cancel));
    REQUIRE(questions.size() == 2);
    CHECK(questions[0].key == "first");
    CHECK(questions[1].key == "second");
    inbox.abandon();
    while (asked.load() < 2) std::this_thread::yield();
  }
}

TEST_CASE("saga engine: a token resumes once") {
  saga::Engine engine;
  auto later = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                   .count() + 60;
  CHECK(engine.first_resume("t1", later));
  CHECK(!engine.first_resume("t1", later));
  CHECK(engine.first_resume("t2", later));
}

TEST_CASE("codec: the era of a request, the methods it lacks, the result stamps") {
  const char* plain = R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})";
  const char* claimed =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{)"
      R"("io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})";

  auto session = mcp::decode(request(plain), false, false);
  REQUIRE(std::holds_alternative<mcp::RequestContext>(session));
  CHECK(!std::get<mcp::RequestContext>(session).stateless);

  auto stateless = mcp::decode(request(claimed), false, false);
  REQUIRE(std::holds_alternative<mcp::RequestContext>(stateless));
  CHECK(std::get<mcp::RequestContext>(stateless).stateless);
  CHECK(std::get<mcp::RequestContext>(stateless).envelope.version == "2026-07-28");

  // A client that chose a session revision stays in it.
  auto negotiated = mcp::decode(request(claimed), false, true);
  REQUIRE(std::holds_alternative<mcp::RequestContext>(negotiated));
  CHECK(!std::get<mcp::RequestContext>(negotiated).stateless);

  auto no_envelope = mcp::decode(request(plain), true, false);
  REQUIRE(std::holds_alternative<mcp::Refusal>(no_envelope));
  CHECK(std::get<mcp::Refusal>(no_envelope).code == jsonrpc::kInvalidParams);

  auto discover = mcp::decode(request(R"({"jsonrpc":"2.0","id":1,"method":"server/discover"})"), false, false);
  REQUIRE(std::holds_alternative<mcp::Refusal>(discover));
  CHECK(std::get<mcp::Refusal>(discover).message == "Method not found: server/discover");

  auto ping = mcp::decode(
      request(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{)"
              R"("io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})"),
      false, false);
  REQUIRE(std::holds_alternative<mcp::Refusal>(ping));
  CHECK(std::get<mcp::Refusal>(ping).message == "Method not found: ping is not part of MCP 2026-07-28");

  json::Document result(rapidjson::kObjectType);
  mcp::encode_result(result, "tools/list", std::get<mcp::RequestContext>(session), "public", result.GetAllocator());
  CHECK(json::write(result) == "{}");
  mcp::encode_result(result, "tools/list", std::get<mcp::RequestContext>(stateless), "public", result.GetAllocator());
  CHECK(json::write(result) == R"({"resultType":"complete","ttlMs":0,"cacheScope":"public"})");
  CHECK(mcp::resource_not_found_code(std::get<mcp::RequestContext>(session)) == -32002);
  CHECK(mcp::resource_not_found_code(std::get<mcp::RequestContext>(stateless)) == jsonrpc::kInvalidParams);
}
