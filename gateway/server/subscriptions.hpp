#pragma once
// Who wants to hear of which change: sessions' resource subscriptions
// (resources/subscribe), the stateless revision's subscriptions/listen
// streams, and the reference-counted upstream subscriptions they need.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catalog/catalog.hpp"
#include "server/sessions.hpp"

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
  /// Queues a task on the worker pool; false once it is shutting down.
  using Post = std::function<bool(std::function<void()>)>;
  /// Ends of listen streams run through `post` (see listen()); upstream
  /// (un)subscriptions run on `io`, waited for by the calling pool thread.
  Subscriptions(catalog::Catalog& catalog, Post post, asio::any_io_executor io);
  Subscriptions(const Subscriptions&) = delete;
  Subscriptions& operator=(const Subscriptions&) = delete;

  /// Subscribes `s` to `route` (under `exposed`, its exposed URI), unless
  /// it already is. The first subscriber subscribes upstream.
  void subscribe(const std::shared_ptr<McpSession>& s, const catalog::Route& route, const std::string& exposed);
  /// The reverse, when `s` is subscribed. The last subscriber unsubscribes
  /// upstream.
  void unsubscribe(const std::shared_ptr<McpSession>& s, const catalog::Route& route, const std::string& exposed);
  /// Drops `s`'s subscriptions (session end).
  void drop(const std::shared_ptr<McpSession>& s);
  /// Makes `s`'s subscriptions exactly `uris` (exposed URIs; ones no
  /// upstream serves any more are skipped): cluster, the replica holding
  /// its stream.
  void replace(const std::shared_ptr<McpSession>& s, const std::vector<std::string>& uris);

  /// Starts a listen stream of `s` (a stateless request) on `ex`, taking
  /// `filter`; `id` is the request's id, the notifications'
  /// subscriptionId. The stream ends when `ex` is cancelled (the client
  /// closed it or cancelled the request).
  void listen(const std::shared_ptr<McpSession>& s, const jsonrpc::Id& id, ListenFilter filter,
              std::shared_ptr<transport::Exchange> ex);

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
    CancelSignal::Subscription end;  ///< ends the listen when its request is cancelled
  };
  void end_listen(const std::shared_ptr<McpSession>& s);
  /// Sends `method` (with `uri`, when not empty) to the listens whose
  /// filter `wants`, tagged with each one's subscription id.
  void notify_listens(std::string_view method, const std::string& uri,
                      const std::function<bool(const ListenFilter&)>& wants);
  /// Counts subscribers per upstream resource; sends (un)subscribe upstream
  /// on the first and last.
  void count(const catalog::Route& r, int delta);

  catalog::Catalog& catalog_;
  Post post_;
  asio::any_io_executor io_;
  std::mutex mu_;  // guards everything below
  std::map<std::shared_ptr<McpSession>, std::set<std::string>> resources_;
  std::map<std::shared_ptr<McpSession>, Listen> listens_;
  std::map<std::pair<const upstream::Upstream*, std::string>, int> upstream_;
};

}  // namespace mcpgw::server
