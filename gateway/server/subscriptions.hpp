#pragma once
// Who wants to hear of which change: sessions' resource subscriptions
// (resources/subscribe), the stateless revision's subscriptions/listen
// streams, and the reference-counted upstream subscriptions they need.
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catalog/catalog.hpp"
#include "jsonrpc/id.hpp"
#include "server/sessions.hpp"
#include "util/event.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::server {

/// What a subscriptions/listen stream takes.
struct ListenFilter {
  bool tools = false, prompts = false, resources = false;
  std::set<std::string> uris;  ///< exposed resource URIs
  /// Each URI of `uris` as the client wrote it, for the acknowledgement.
  std::vector<std::string> as_asked;
};

class Subscriptions {
 public:
  explicit Subscriptions(catalog::Catalog& catalog);
  Subscriptions(const Subscriptions&) = delete;
  Subscriptions& operator=(const Subscriptions&) = delete;

  // Each coroutine below holds no thread while upstreams answer; its
  // caller keeps the Subscriptions alive until it ends.

  /// Subscribes `s` to `route` (under `exposed`, its exposed URI), unless
  /// it already is. Resumes once the upstream subscription is in place
  /// (the first subscriber sends it; later ones wait for it).
  Task<> subscribe(std::shared_ptr<McpSession> s, catalog::Route route, std::string exposed);
  /// The reverse, when `s` is subscribed. The last subscriber unsubscribes
  /// upstream.
  Task<> unsubscribe(std::shared_ptr<McpSession> s, catalog::Route route, std::string exposed);
  /// Drops `s`'s subscriptions (session end).
  Task<> drop(std::shared_ptr<McpSession> s);
  /// Makes `s`'s subscriptions exactly `uris` (exposed URIs; ones no
  /// upstream serves any more are skipped): cluster, the replica holding
  /// its stream.
  Task<> replace(std::shared_ptr<McpSession> s, std::vector<std::string> uris);

  /// Serves a listen stream of `s` (a stateless request) on `ex`, taking
  /// `filter`; `id` is the request's id, the notifications'
  /// subscriptionId. Sends the acknowledgement once the upstream
  /// subscriptions are in place, and resumes when `ex` is cancelled (the
  /// client closed the stream or cancelled the request) and the listen's
  /// upstream subscriptions are dropped; the final answer is the caller's.
  Task<> listen(std::shared_ptr<McpSession> s, jsonrpc::Id id, ListenFilter filter,
                std::shared_ptr<transport::Exchange> ex);

  /// A reload replaced server `was` with `now`: the upstream subscriptions
  /// held on `was` are made on `now` (the clients subscribed stay so, and
  /// hear of updates from the new server). Resumes once they are sent.
  Task<> moved(const upstream::Upstream& was, std::shared_ptr<upstream::Upstream> now);

  /// Tells the listens that take them of a list change (`what`: tools,
  /// resources or prompts).
  void list_changed(std::string_view what);
  /// Forwards an upstream's notifications/resources/updated, whose URI
  /// clients know as `exposed`, to the sessions subscribed to it and the
  /// listens that take it.
  void resource_updated(const std::string& exposed, const std::string& note);

 private:
  struct Listen {
    std::string id;  ///< the request's id as JSON text
    ListenFilter filter;
    std::shared_ptr<transport::Exchange> exchange;
  };
  /// Sends `method` (with `uri`, when not empty) to the listens whose
  /// filter `wants`, tagged with each one's subscription id.
  void notify_listens(std::string_view method, const std::string& uri,
                      const std::function<bool(const ListenFilter&)>& wants);
  /// Counts subscribers per upstream resource and brings the upstream in
  /// line: subscribed while it has any. Resumes when it is (or a request
  /// for it failed, which is logged).
  Task<> count(catalog::Route r, int delta);

  /// One upstream resource's subscribers, and where its upstream
  /// subscription stands.
  struct Remote {
    int subscribers = 0;
    bool subscribed = false;  ///< as last sent upstream
    bool sending = false;     ///< a coroutine is (un)subscribing it upstream
    /// The server it was last sent to: a reload may replace the server of
    /// a name, which must then be subscribed anew. Compared, never followed.
    const upstream::Upstream* where = nullptr;
  };
  /// A server's name (the same across a reload that replaces it) and the
  /// upstream URI.
  using RemoteKey = std::pair<std::string, std::string>;

  catalog::Catalog& catalog_;
  /// A request to an upstream ended (count() waiting for one sent by
  /// another coroutine looks again). A lock of its own.
  Event sent_;
  util::Mutex mu_;
  std::map<std::shared_ptr<McpSession>, std::set<std::string>> resources_ GUARDED_BY(mu_);
  std::map<std::shared_ptr<McpSession>, Listen> listens_ GUARDED_BY(mu_);
  std::map<RemoteKey, Remote> upstream_ GUARDED_BY(mu_);
};

}  // namespace mcpgw::server
