#include "oauth/fetch.hpp"

#include <boost/asio/this_coro.hpp>

#include "oauth/wire.hpp"
#include "util/ascii.hpp"

namespace mcpgw::oauth {

std::string origin_key(const std::string& url) {
  auto parsed = transport::Url::parse(url);
  if (!parsed) return {};
  return (parsed->tls ? "https://" : "http://") + ascii_lowered(parsed->host) + ":" + parsed->port;
}

std::string status_text(const HttpAnswer& answer) {
  std::string s = "HTTP " + std::to_string(answer.status);
  if (answer.status / 100 == 3)
    s += " (a redirect to \"" + answer.head.get("Location").substr(0, 200) + "\", not followed)";
  return s;
}

Fetcher::Fetcher(transport::Io& io, transport::TlsOptions tls, std::optional<Reach> reach)
    : io_(io), tls_(std::move(tls)), reach_(std::move(reach)) {}

Result<void> Fetcher::permits(const std::string& url) const {
  if (!reach_ || reach_->trusted.count(origin_key(url))) return {};
  auto parsed = transport::Url::parse(url);
  if (!parsed) return Error{parsed.error()};
  if (auto refused = transport::check_host(reach_->guard, parsed->host))
    return Error{"refused before connecting: " + refused->message};
  return {};
}

Result<std::shared_ptr<transport::HttpClient>> Fetcher::client_for(const std::string& url) {
  auto parsed = transport::Url::parse(url);
  if (!parsed) return Error{parsed.error()};
  std::string origin = origin_of(url);
  std::optional<transport::AddressPolicy> guard;
  if (reach_ && !reach_->trusted.count(origin_key(url))) guard = reach_->guard;
  util::MutexLock lk(mu_);
  if (auto it = clients_.find(origin); it != clients_.end()) return it->second;
  auto made = transport::HttpClient::create(io_, *parsed, tls_, guard);
  if (!made) return Error{made.error()};
  clients_.emplace(origin, *made);
  return *made;
}

Task<Result<HttpAnswer>> Fetcher::send(std::string method, const std::string& url, transport::Headers headers,
                                       std::string body, Clock::time_point deadline, CancelSignal* cancel) {
  auto client = client_for(url);
  if (!client) co_return Error{client.error()};
  // The pool is per origin; this request's path and query ride on a copy.
  auto target = transport::Url::parse(url);
  transport::HttpRequest req{std::move(method), std::move(headers), std::move(body), target->target};
  auto abort = transport::Abort::start(co_await asio::this_coro::executor, deadline, cancel);
  HttpAnswer answer;
  bool too_large = false;
  auto result = co_await (*client)->exchange(
      req, *abort, [&](const transport::HttpHead& h) {
        answer.head = h;
        return true;
      },
      [&](std::string_view data) {
        if (answer.body.size() + data.size() > kMaxBody) {
          too_large = true;
          return false;
        }
        answer.body.append(data);
        return true;
      });
  auto why = abort->why();
  abort->disarm();
  if (why == transport::Abort::Why::Timeout) co_return Error{"no answer in time"};
  if (why == transport::Abort::Why::Cancelled) co_return Error{"cancelled"};
  if (too_large) co_return Error{"answered more than " + std::to_string(kMaxBody) + " bytes"};
  if (!result.error.empty()) co_return Error{result.error};
  answer.status = result.head.status;
  co_return answer;
}

}  // namespace mcpgw::oauth
