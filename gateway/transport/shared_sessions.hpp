#pragma once
// What the Streamable HTTP transport needs to serve a session that another
// replica began (cluster.secret, cluster.redis): an id that carries the
// session sealed inside it, and a cluster-wide end. The transport knows
// neither the cipher nor Redis; gateway/cluster implements this.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "jsonrpc/message.hpp"
#include "util/result.hpp"

namespace mcpgw::transport {

struct ClientContext;

/// What a sealed session id carries: enough for any replica to serve the
/// session's next request without having seen its initialize.
struct SealedSession {
  std::string principal;         ///< "" without auth
  std::string mode;              ///< as the URL named it ("" = the default)
  std::string protocol_version;  ///< negotiated by initialize
  std::string capabilities;      ///< the client's, compact JSON object
  std::string client_info;       ///< the client's clientInfo, compact JSON object
  std::int64_t created = 0;      ///< unix seconds of the initialize
  bool operator==(const SealedSession&) const = default;
};

/// Why an id does not open: unknown (forged, tampered, expired, or ended
/// by a DELETE: 404 like any unknown session), or this replica cannot tell
/// now (`unavailable`, e.g. it never reached Redis: 503 with `message`).
struct OpenRefusal {
  bool unavailable = false;
  std::string message;
};

/// Sessions shared by the replicas of a cluster.
class SharedSessions {
 public:
  virtual ~SharedSessions() = default;
  /// The id of a new session described by `s`; an error when it cannot be
  /// sealed (e.g. the client's capabilities are too large for a header).
  virtual Result<std::string> seal(const SealedSession& s) = 0;
  /// The session sealed in `id`, unless it is unknown or ended.
  virtual std::variant<SealedSession, OpenRefusal> open(std::string_view id) = 0;
  /// Ends session `id` cluster-wide. `done` gets an error naming Redis when
  /// the end could not be recorded (the session then goes on); it is
  /// called on some I/O thread, at most a few seconds later.
  virtual void end(const std::string& id, std::function<void(Result<void>)> done) = 0;
  /// Tells this replica to drop its copy of a session that ended elsewhere
  /// (`drop` is called with the id, from an I/O thread). Call once before
  /// serving.
  virtual void on_ended_elsewhere(std::function<void(const std::string& id)> drop) = 0;
  /// Session `id` is served here now (its copy was made or restored).
  virtual void held(const std::string& id) = 0;
  /// This replica dropped its copy of session `id`.
  virtual void released(const std::string& id) = 0;
};

/// What a session begun by `initialize` (from a client described by `ctx`)
/// is: the revision it will negotiate, the client's capabilities and
/// clientInfo, now.
SealedSession describe_session(const ClientContext& ctx, const jsonrpc::Message& initialize);

}  // namespace mcpgw::transport
