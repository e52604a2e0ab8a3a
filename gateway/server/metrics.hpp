#pragma once
// Prometheus metrics of the gateway, served on /metrics.
#include <memory>
#include <string>

namespace mcpgw::server {

class Metrics {
 public:
  Metrics();
  ~Metrics();
  /// One MCP message received, by method ("response" for answers).
  void message(std::string_view method);
  /// One tool call finished.
  void tool_call(const std::string& server, std::string_view outcome, double seconds);
  void set_upstream_up(const std::string& server, bool up);
  void set_sessions(double n);
  /// The Prometheus text exposition.
  std::string render() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpgw::server
