#pragma once
// Upstream over MCP Streamable HTTP: each request is a POST answered as JSON
// or as an SSE stream; keep-alive connections are pooled so calls run in
// parallel.
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "transport/connection.hpp"

namespace httplib {
class Client;
}

namespace mcpgw::transport {

class HttpConnection final : public Connection {
 public:
  /// Validates `url` (http:// or https://) and prepares the pool; connects lazily.
  static Result<std::unique_ptr<HttpConnection>> create(
      std::string name, const std::string& url, std::vector<std::pair<std::string, std::string>> headers,
      ConnectionHandlers handlers);
  ~HttpConnection() override;

  Response request(std::string_view method, const json::Value* params,
                   const RequestOptions& opts) override;
  bool notify(std::string_view method, const json::Value* params) override;
  bool respond(std::string message) override;
  void set_protocol_version(std::string version) override;
  void listen() override;
  void close() override;
  bool alive() const override { return !closed_.load(); }

 private:
  HttpConnection() = default;
  std::unique_ptr<httplib::Client> acquire();
  void release(std::unique_ptr<httplib::Client> c);
  /// POSTs `body`; for a request, waits for the response with `id`.
  /// `routing`: the headers of a stateless-revision request (then sent
  /// instead of the session's).
  Response post(const std::string& body, std::optional<std::int64_t> id, const RequestOptions& opts,
                const std::vector<std::pair<std::string, std::string>>& routing = {});

  /// Waits until `until` before resuming a stream; false when the
  /// connection closed or `cancel` fired meanwhile.
  bool wait_resume(std::chrono::steady_clock::time_point until, CancelSignal* cancel);
  /// Resumptions of one request's stream, at most.
  static constexpr int kMaxResumes = 5;

  std::string name_, origin_, path_;
  std::vector<std::pair<std::string, std::string>> headers_;
  ConnectionHandlers handlers_;
  std::mutex mu_;
  std::vector<std::unique_ptr<httplib::Client>> idle_;
  std::string session_id_, protocol_version_;
  std::atomic<std::int64_t> next_id_{1};
  std::atomic<bool> closed_{false};
  /// The GET stream: its thread, and the client it reads with (stopped by close()).
  std::thread listener_;
  std::unique_ptr<httplib::Client> stream_client_;
  std::condition_variable stream_cv_;
  bool listening_ = false;
};

}  // namespace mcpgw::transport
