#pragma once
// Upstream over a child's stdio: newline-delimited JSON-RPC on stdin/stdout,
// stderr lines to our log under the server's name.
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "transport/child_process.hpp"
#include "transport/connection.hpp"

namespace mcpgw::transport {

class StdioConnection final : public Connection {
 public:
  /// Spawns the child and starts reading. `name` labels log lines.
  static Result<std::unique_ptr<StdioConnection>> start(std::string name, const ChildSpec& spec,
                                                        ConnectionHandlers handlers);
  ~StdioConnection() override;

  Response request(std::string_view method, const json::Value* params,
                   const RequestOptions& opts) override;
  bool notify(std::string_view method, const json::Value* params) override;
  bool respond(std::string message) override;
  void set_protocol_version(std::string) override {}
  void close() override;
  bool alive() const override { return !closed_.load(); }
  pid_t pid() const { return child_->pid(); }

 private:
  struct Slot {
    std::condition_variable cv;
    std::optional<jsonrpc::Message> msg;
  };
  StdioConnection(std::string name, std::unique_ptr<ChildProcess> child, ConnectionHandlers h);
  bool write_line(std::string line);
  void read_stdout();
  void read_stderr();
  void fail_all(const std::string& reason);

  std::string name_;
  std::unique_ptr<ChildProcess> child_;
  ConnectionHandlers handlers_;
  std::mutex write_mu_;
  std::mutex mu_;
  std::map<std::int64_t, std::shared_ptr<Slot>> pending_;
  std::atomic<std::int64_t> next_id_{1};
  std::atomic<bool> closed_{false};
  std::string close_reason_;
  std::thread out_thread_, err_thread_;
};

}  // namespace mcpgw::transport
