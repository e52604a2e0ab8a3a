#include "transport/admin_server.hpp"

#include "transport/http_listener.hpp"

namespace mcpgw::transport {

struct AdminServer::Impl {
  std::map<std::string, std::function<SimpleResponse()>, std::less<>> gets;
  std::map<std::string, Route, std::less<>> routes;
  std::unique_ptr<http::Listener> listener;
  bool started = false;

  Task<void> handle(http::Request& req, http::Responder& res) {
    http::Response reply{404, {}, {}};
    auto it = gets.find(req.path());
    if (it != gets.end() && (req.method == "GET" || req.method == "HEAD")) {
      SimpleResponse r = it->second();
      reply = http::Response{r.status, {{"Content-Type", r.content_type}}, std::move(r.body)};
      for (auto& [name, value] : r.headers) reply.headers.push_back({std::move(name), std::move(value)});
    } else if (auto route = routes.find(req.path()); route != routes.end()) {
      reply = co_await route->second(req);
    }
    co_await res.send(std::move(reply));
  }
};

AdminServer::AdminServer(std::string host, int port, Io& io) : impl_(std::make_unique<Impl>()) {
  http::ListenerOptions lo;
  lo.host = std::move(host);
  lo.port = port;
  lo.max_body_bytes = 64 << 10;
  Impl* im = impl_.get();
  impl_->listener = std::make_unique<http::Listener>(
      io, std::move(lo), [im](http::Request& req, http::Responder& res) { return im->handle(req, res); });
}

AdminServer::~AdminServer() { stop(); }

void AdminServer::add_get(const std::string& path, std::function<SimpleResponse()> fn, GetAccess) {
  impl_->gets[path] = std::move(fn);
}

void AdminServer::add_route(const std::string& path, Route fn) { impl_->routes[path] = std::move(fn); }

Result<int> AdminServer::bind() { return impl_->listener->bind(); }

void AdminServer::start() {
  impl_->started = true;
  impl_->listener->start();
}

void AdminServer::stop() {
  impl_->listener->stop();
  if (impl_->started) impl_->listener->wait();
  impl_->started = false;
}

}  // namespace mcpgw::transport
