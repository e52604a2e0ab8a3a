#pragma once
// A client session as the router sees it.
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "jsonrpc/json.hpp"
#include "transport/downstream.hpp"

namespace mcpgw::server {

class ClientCall;

/// One client session, or for a client of the stateless revision, one
/// request (`stateless`), whose envelope fills the same fields.
class McpSession final : public transport::Session, public std::enable_shared_from_this<McpSession> {
 public:
  std::mutex mu;
  std::string mode;  ///< the mode this session sees ("all" or a configured one)
  std::string protocol_version;
  json::Document client_capabilities{rapidjson::kObjectType};
  std::string client_name;
  /// Least severe log level the client wants; "" = none (a stateless
  /// request without `io.modelcontextprotocol/logLevel`).
  std::string log_level = "info";
  bool log_level_set = false;  ///< the client sent logging/setLevel
  bool initialized = false;
  bool stateless = false;
  /// A stateless `subscriptions/listen`: its request id (JSON text, as the
  /// notifications' subscriptionId) and which notifications it takes.
  std::string listen_id;
  bool listen_tools = false, listen_prompts = false, listen_resources = false;
  std::set<std::string> listen_uris;
  std::shared_ptr<transport::Exchange> listen_exchange;
  CancelSignal::Subscription listen_end;  ///< ends the listen when its request is cancelled
  /// The client declared sampling, elicitation or roots: its calls run
  /// where they can stream the requests upstreams send it.
  bool answers_requests = false;
  /// Requests forwarded to this client and not answered yet, by our id.
  std::map<std::string, std::weak_ptr<ClientCall>> forwarded;
  /// Requests in flight by their JSON id text, for notifications/cancelled.
  std::map<std::string, std::weak_ptr<transport::Exchange>> inflight;
  /// Exposed resource URIs this session subscribed to.
  std::set<std::string> subscriptions;
};

}  // namespace mcpgw::server
