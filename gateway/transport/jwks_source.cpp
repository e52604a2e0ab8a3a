#include "transport/jwks_source.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "transport/http_client.hpp"
#include "transport/http_server.hpp"

namespace mcpgw::transport {
namespace {

Result<std::string> read_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) return Error{path + ": cannot read: " + std::strerror(errno)};
  std::string text;
  char buf[8192];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, f.get())) {
    text.append(buf, n);
    if (text.size() > JwksSource::kMaxBytes) return Error{path + ": larger than 1 MiB"};
  }
  return text;
}

}  // namespace

Result<std::shared_ptr<JwksSource>> JwksSource::create(Io& io, const auth::OAuthSettings& s) {
  if (!s.jwks_file.empty()) {
    auto text = read_file(s.jwks_file);
    if (!text) return Error{text.error()};
    auto set = auth::parse_jwks(*text);
    if (!set) return Error{s.jwks_file + ": " + set.error()};
    std::shared_ptr<JwksSource> src(new JwksSource(io, ""));
    util::MutexLock lk(src->mu_);  // not shared yet: costs nothing
    src->keys_ = std::make_shared<const auth::KeySet>(std::move(*set));
    return src;
  }
  auto url = Url::parse(s.jwks_url);
  if (!url) return Error{"jwks_url: " + url.error()};
  if (!url->tls && !is_loopback_host(url->host))
    return Error{"jwks_url: plain http is allowed only for a loopback host; use https"};
  return std::shared_ptr<JwksSource>(new JwksSource(io, s.jwks_url));
}

JwksSource::Keys JwksSource::keys() const {
  util::MutexLock lk(mu_);
  return keys_;
}

void JwksSource::start() {
  if (url_.empty()) return;
  util::MutexLock lk(mu_);
  if (ever_started_) return;
  begin_fetch();
}

void JwksSource::begin_fetch() {
  fetching_ = true;
  ever_started_ = true;
  last_start_ = Clock::now();
  asio::co_spawn(asio::make_strand(io_.executor()), [self = shared_from_this()] { return self->fetch(); },
                 asio::detached);
}

void JwksSource::when_fetched(std::function<void(Keys)> done) {
  Keys now;
  {
    util::MutexLock lk(mu_);
    auto now_t = Clock::now();
    bool allowed = !ever_started_ || (last_failed_ && now_t - last_start_ >= kRetryAfterFailure) ||
                   (!last_failed_ && (!last_refetch_ || now_t - *last_refetch_ >= kRefetchInterval));
    if (!fetching_ && !url_.empty() && allowed) {
      last_refetch_ = now_t;
      begin_fetch();
    }
    if (fetching_) {
      waiters_.push_back(std::move(done));
      return;
    }
    now = keys_;
  }
  done(std::move(now));
}

Task<JwksSource::Keys> JwksSource::refresh() {
  auto self = shared_from_this();
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(Keys)>(
      [self](auto handler) {
        // The handler is move-only and resumes the waiting coroutine: keep
        // it shared, and resume it on its own executor.
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        self->when_fetched([h](Keys keys) {
          auto ex = asio::get_associated_executor(*h);
          asio::post(ex, [h, keys = std::move(keys)]() mutable { std::move(*h)(std::move(keys)); });
        });
      },
      asio::use_awaitable);
}

Task<void> JwksSource::fetch() {
  std::string error;
  Keys fresh;
  auto url = Url::parse(url_);
  auto client = url ? HttpClient::create(io_, *url, TlsOptions{}) : Result<std::shared_ptr<HttpClient>>(Error{url.error()});
  if (!client) {
    error = client.error();
  } else {
    auto strand = co_await asio::this_coro::executor;
    auto abort = Abort::start(strand, Clock::now() + std::chrono::seconds(10), nullptr);
    HttpRequest req{"GET", {{"Accept", "application/json"}}, {}, {}};
    std::string body;
    bool too_big = false;
    HttpResult res = co_await (*client)->exchange(
        req, *abort, [](const HttpHead&) { return true; },
        [&](std::string_view data) {
          if (body.size() + data.size() > kMaxBytes) {
            too_big = true;
            return false;
          }
          body.append(data);
          return true;
        });
    abort->disarm();
    (*client)->clear();
    if (!res.error.empty()) error = res.error;
    else if (too_big) error = "the JWKS is larger than 1 MiB";
    else if (res.head.status != 200) error = "HTTP " + std::to_string(res.head.status);
    else if (auto set = auth::parse_jwks(body); !set) error = set.error();
    else fresh = std::make_shared<const auth::KeySet>(std::move(*set));
  }
  std::vector<std::function<void(Keys)>> waiting;
  Keys now;
  {
    util::MutexLock lk(mu_);
    fetching_ = false;
    last_failed_ = !fresh;
    if (fresh) keys_ = fresh;
    now = keys_;
    waiting.swap(waiters_);
  }
  if (fresh) spdlog::info("auth: read {} signing keys from {}", fresh->keys.size(), url_);
  else spdlog::error("auth: cannot fetch the JWKS from {}: {}", url_, error);
  for (auto& w : waiting) w(now);
}

}  // namespace mcpgw::transport
