// The stdio transport: newline-delimited JSON-RPC on stdin/stdout, one
// client and one session for the whole process, each request on its own
// thread.
#include <atomic>
#include <cstdio>
#include <iostream>
#include <list>
#include <thread>
#include <utility>

#include "kit_internal.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::examples {

using detail::answer;
using detail::no_initialize;

void Server::write_line(std::string_view line) {
  util::MutexLock lock(stdout_mutex_);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void Server::write_raw_line(std::string_view line) {
  if (stdio_) write_line(line);
}

int Server::serve_stdio() {
  stdio_ = true;
  // One client, one session for the whole process (once it initializes).
  auto session = std::make_shared<detail::Session>("stdio");
  session->channel.writer = [this](std::string msg) { write_line(msg); };
  track(session);
  const CallContext::Send send = [this](std::string msg) {
    write_line(msg);
    return true;
  };
  std::jthread background;
  if (background_) background = std::jthread(background_);

  // One thread per request, so a slow call (sleep, or one waiting for the
  // client's answer, which this loop must read) never holds up the others.
  // std::list keeps each entry in place, so a thread can flag its own entry.
  struct Worker {
    std::atomic<bool> done{false};
    std::thread thread;
  };
  std::list<Worker> workers;
  auto reap = [&](bool all) {
    for (auto it = workers.begin(); it != workers.end();) {
      if (all || it->done) {
        it->thread.join();
        it = workers.erase(it);
      } else {
        ++it;
      }
    }
  };
  auto spawn = [&](auto work) {
    Worker& w = workers.emplace_back();
    w.thread = std::thread([&w, work = std::move(work)] {
      work();
      w.done = true;
    });
  };

  // A stateless request: checked here, run on a worker. A listen request
  // is never answered; the stream ends when the client cancels it.
  auto serve_stateless = [&](jsonrpc::Message msg) {
    if (msg.method() == "initialize") return write_line(no_initialize(msg.id()));
    auto call = std::make_shared<detail::Stateless>();
    if (auto bad = check_envelope(msg, nullptr, *call)) return write_line(answer(msg.id(), std::move(*bad)));
    if (msg.method() == "subscriptions/listen") {
      auto opened = listen(msg, [this](std::string note) { write_line(note); });
      if (auto* err = std::get_if<RpcError>(&opened)) write_line(answer(msg.id(), std::move(*err)));
      return;
    }
    spawn([this, call, &send, m = std::move(msg)] { write_line(answer(m.id(), dispatch_stateless(m, *call, send))); });
  };

  std::string line;
  while (std::getline(std::cin, line)) {
    reap(false);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    jsonrpc::Parsed parsed = jsonrpc::parse(line);
    if (parsed.batch) {
      write_line(jsonrpc::make_error(json::Value(), jsonrpc::kInvalidRequest,
                                     "Invalid Request: batches are not supported"));
      continue;
    }
    for (const std::string& err : parsed.errors) write_line(err);
    for (jsonrpc::Message& msg : parsed.messages) {
      // Over stdio, cancelling its request is how a client closes a listen stream.
      if (msg.is_notification() && msg.method() == "notifications/cancelled" && msg.params())
        if (const json::Value* id = json::find(*msg.params(), "requestId")) cancel_listen(*id);
      if (is_stateless(msg, false)) {
        // Stateless clients post no responses (the server asks nothing)
        // and their notifications need no action.
        if (msg.is_request()) serve_stateless(std::move(msg));
        continue;
      }
      // Initialize runs here, before anything read after it: the session's
      // client capabilities must be known before a call asks about them.
      if (!msg.is_request() || msg.method() == "initialize") {
        if (auto reply = dispatch(msg, *session, send)) write_line(*reply);
        continue;
      }
      spawn([this, &session, &send, m = std::move(msg)] {
        if (auto reply = dispatch(m, *session, send)) write_line(*reply);
      });
    }
  }
  // No more answers can arrive: calls waiting for one give up now.
  session->close("the client closed stdin");
  reap(true);
  untrack(session->id);
  util::MutexLock lock(listeners_mutex_);
  listeners_.clear();
  return 0;
}

}  // namespace mcpgw::examples
