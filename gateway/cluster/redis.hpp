#pragma once
// A connection to Redis that stays up: hiredis's asynchronous context driven
// by the gateway's Asio loop (its socket watched through a
// posix::stream_descriptor, every hiredis call on one strand), so no thread
// ever waits on Redis. When the connection drops it is made again with
// backoff; commands meanwhile fail at once with an error naming Redis.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "util/result.hpp"
#include "util/task.hpp"

namespace boost::asio {
class io_context;
}

namespace mcpgw::cluster {

/// One Redis reply, as a value.
struct RedisReply {
  enum class Type { Nil, Status, Error, Integer, String, Array };
  Type type = Type::Nil;
  long long integer = 0;
  std::string text;  ///< Status, Error, String
  std::vector<RedisReply> items;
};

/// Where Redis is (config::Cluster, parsed).
struct RedisEndpoint {
  std::string host;
  int port = 6379;
  int db = 0;
  std::string password;
  std::string shown;  ///< how messages name it (no password)
};

/// A connection to Redis, commands or a subscription to one channel.
class Redis {
 public:
  using Done = std::function<void(Result<RedisReply>)>;
  using Message = std::function<void(const std::string& payload)>;
  /// Told on every change: up, or down with why.
  using State = std::function<void(bool up, const std::string& why)>;

  /// A command connection.
  Redis(boost::asio::io_context& io, RedisEndpoint endpoint, State on_state);
  /// A subscriber connection: `on_message` gets every message published on
  /// `channel`; `on_state(true)` comes once the subscription holds.
  Redis(boost::asio::io_context& io, RedisEndpoint endpoint, State on_state, std::string channel, Message on_message);
  /// Closes the connection (stop()).
  ~Redis();
  Redis(const Redis&) = delete;
  Redis& operator=(const Redis&) = delete;

  /// Connects (and reconnects whenever the connection drops).
  void start();
  /// Closes the connection and fails the commands waiting; no reconnect.
  /// Returns once done; must not be called on the loop.
  void stop();
  /// Sends `args` (a command connection); `done` gets the reply, or an
  /// error naming Redis when it is down or does not answer within
  /// `timeout`. `done` runs on an I/O thread and must not block.
  void command(std::vector<std::string> args, Done done,
               std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));
  /// command() for a coroutine: resumes it on its own executor with the
  /// reply, never blocking a thread (the connection may live on the
  /// caller's own worker).
  Task<Result<RedisReply>> call(std::vector<std::string> args,
                                std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));
  /// True while connected (and subscribed).
  bool up() const;
  /// "up", or why not.
  std::string status() const;

 private:
  struct Conn;
  std::shared_ptr<Conn> conn_;
};

}  // namespace mcpgw::cluster
