#pragma once
// HTTP/1.1 client for one origin (http:// or https://) on the I/O loop: a
// pool of keep-alive connections without a fixed size (an idle one is
// reused, a new one opened when none is idle, a dead one dropped), bodies
// handed over as they arrive, every wait bounded by an Abort.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "transport/address_policy.hpp"
#include "transport/io.hpp"
#include "util/cancel.hpp"
#include "util/deadline.hpp"
#include "util/result.hpp"
#include "util/task.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport {

using Headers = std::vector<std::pair<std::string, std::string>>;

/// The parts of an http:// or https:// URL the client needs.
struct Url {
  bool tls = false;
  std::string host;    ///< without brackets for IPv6 literals
  std::string port;    ///< explicit or the scheme's
  std::string target;  ///< path and query, "/" at least
  std::string host_header;  ///< host[:port] as written in the URL
  /// Parses `url`; an error names what is wrong with it.
  static Result<Url> parse(const std::string& url);
  /// "scheme://host[:port]path", for messages.
  std::string text() const;
};

/// How to check an https server's certificate.
struct TlsOptions {
  std::string ca_file;  ///< PEM bundle to trust; empty = the system's CA store
  bool verify = true;   ///< false = accept any certificate (for tests only)
};

/// Ends one exchange (or a wait between exchanges) early: at its deadline,
/// when the caller's CancelSignal fires, or when fire() is called (the
/// connection closes). It lives on one strand: everything but fire() must be
/// called there, and the operation it interrupts must run there too.
class Abort : public std::enable_shared_from_this<Abort> {
 public:
  enum class Why { None, Timeout, Cancelled, Closed };
  using Clock = std::chrono::steady_clock;

  /// Arms the deadline; `cancel` (may be null) must outlive disarm().
  static std::shared_ptr<Abort> start(asio::any_io_executor strand, Clock::time_point deadline,
                                      CancelSignal* cancel);
  /// Ends the exchange with `why`; from any thread. Only the first reason counts.
  void fire(Why why);
  /// Moves the deadline (a stream that shows life gets more time).
  void extend(Clock::time_point deadline) { deadline_ = deadline; }
  Clock::time_point deadline() const { return deadline_; }
  /// Why it fired; None while it has not.
  Why why() const { return why_; }
  /// What interrupts the operation in progress (closing its socket,
  /// cancelling its timer); runs at once when fired already. Empty = none.
  void on_fire(std::function<void()> action);
  /// Stops the deadline and the cancel subscription; call when done.
  void disarm();

  Abort(asio::any_io_executor strand, Clock::time_point deadline);

 private:
  void wait();
  void fire_here(Why why);
  asio::any_io_executor strand_;
  Deadline timer_;
  Clock::time_point deadline_;
  Why why_ = Why::None;
  bool disarmed_ = false;
  std::function<void()> action_;
  CancelSignal::Subscription cancel_;
};

/// One request to send.
struct HttpRequest {
  std::string method;  ///< "GET", "POST", "DELETE"
  Headers headers;
  std::string body;
  /// Path and query; "" = the client's URL's (another path on the same origin otherwise).
  std::string target;
};

/// The status and headers of a response.
struct HttpHead {
  int status = 0;
  Headers headers;
  /// The value of header `name` (case-insensitive); "" when absent.
  std::string get(std::string_view name) const;
};

/// Why an exchange failed, as far as the server is concerned.
enum class HttpError {
  None,         ///< the response came (maybe cut short by a callback)
  Unreachable,  ///< resolving, connecting or the TLS handshake failed: nothing was sent
  Aborted,      ///< the Abort fired before anything was sent
  Broken,       ///< the connection broke once the request was (partly) written: the server may have it
  Refused,      ///< the client's AddressPolicy refused the host or an address it resolved to: nothing was sent
};

/// How an exchange went.
struct HttpResult {
  std::string error;  ///< empty = the response came (maybe cut short by a callback)
  HttpError kind = HttpError::None;
  HttpHead head;
  std::uint64_t body_bytes = 0;  ///< how much of the body came
};

/// The connections to one origin, and the exchanges over them.
class HttpClient {
 public:
  /// Gets the head once; false stops reading (the body is not wanted).
  using OnHead = std::function<bool(const HttpHead&)>;
  /// Gets each piece of the body as it arrives; false stops reading.
  using OnData = std::function<bool(std::string_view)>;
  /// Gets a body's announced length once the head came; the buffer it
  /// returns, of exactly that length, is where the body is read to, by the
  /// socket itself and without going through OnData. An empty span has the
  /// body come through OnData after all.
  using IntoBuffer = std::function<std::span<char>(std::size_t length)>;

  /// Prepares the pool (and, for https, the TLS context: `tls`); connects
  /// lazily. With `guard`, the host and every address it resolves to are
  /// checked before connecting, and a connection goes to exactly the
  /// addresses checked (no second lookup a DNS answer could change).
  static Result<std::shared_ptr<HttpClient>> create(Io& io, Url url, const TlsOptions& tls,
                                                    std::optional<AddressPolicy> guard = std::nullopt);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /// Sends `req` and reads the answer. Must be co_awaited on `abort`'s
  /// strand; `abort` firing closes the socket in use, and the result's
  /// error then says so (the caller knows why from abort.why()). A
  /// connection is put back into the pool only when its response was read
  /// to the end. A request is never sent twice: only a pooled connection
  /// found closed before any byte of it was written is swapped for another.
  /// A body of known length (not chunked) goes to `into`'s buffer when it
  /// gives one.
  Task<HttpResult> exchange(const HttpRequest& req, Abort& abort, OnHead on_head, OnData on_data,
                            IntoBuffer into = {});
  /// Closes the idle connections.
  void clear();
  const Url& url() const { return url_; }
  /// The loop its connections live on.
  Io& io() const { return io_; }

  struct Stream;  ///< one connection (TCP, or TLS over TCP); defined in the .cpp

 private:
  HttpClient(Io& io, Url url);
  struct Idle;  ///< one worker's idle connections; defined in the .cpp
  /// The idle connections of the calling thread's worker.
  Idle& idle_here();
  std::unique_ptr<Stream> take_idle();
  void give_back(std::unique_ptr<Stream> s);
  /// A new connection; `why` tells an error's kind (Unreachable or Refused).
  Task<Result<std::unique_ptr<Stream>>> open(Abort& abort, HttpError& why);

  Io& io_;
  Url url_;
  struct Tls;
  std::unique_ptr<Tls> tls_;  ///< null for http://
  std::optional<AddressPolicy> guard_;
  std::vector<std::unique_ptr<Idle>> idle_;  ///< per worker
};

}  // namespace mcpgw::transport
