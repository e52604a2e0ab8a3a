#include "server_kit.hpp"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iomanip>
#include <iostream>
#include <list>
#include <stdexcept>
#include <thread>
#include <unordered_set>

#include "mcp/protocol.hpp"
#include "util/random.hpp"

namespace mcpgw::examples {
namespace {

void log_line(std::string_view what) { std::cerr << what << std::endl; }

json::Document parse_or_throw(const JsonText& text, std::string_view what) {
  auto doc = json::parse(text.text());
  if (!doc) throw std::invalid_argument(std::string(what) + ": " + doc.error());
  return std::move(*doc);
}

}  // namespace

// ---------------------------------------------------------------------------
// Result and argument helpers

json::Document text_result(std::string_view text) {
  json::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  json::Value item(rapidjson::kObjectType);
  item.AddMember("type", "text", a);
  item.AddMember("text", json::str(text, a), a);
  json::Value content(rapidjson::kArrayType);
  content.PushBack(item, a);
  d.AddMember("content", content, a);
  return d;
}

void set_json(json::Document& result, std::string_view key, std::string_view json_text) {
  json::Document value = parse_or_throw(std::string(json_text), key);
  json::set(result, key, json::Value(value, result.GetAllocator()), result.GetAllocator());
}

std::optional<double> get_number(const json::Value& args, std::string_view key) {
  const json::Value* v = json::find(args, key);
  if (!v || !v->IsNumber()) return std::nullopt;
  return v->GetDouble();
}

std::optional<std::int64_t> get_int(const json::Value& args, std::string_view key) {
  const json::Value* v = json::find(args, key);
  if (!v || !v->IsInt64()) return std::nullopt;
  return v->GetInt64();
}

std::string format_number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

// ---------------------------------------------------------------------------
// Protocol

Server::Server(std::string name, std::string version)
    : name_(std::move(name)), version_(std::move(version)) {}

void Server::add_tool(ToolSpec spec) {
  for (const Tool& t : tools_)
    if (t.name == spec.name) throw std::invalid_argument("duplicate tool: " + spec.name);

  // Built once here, so tools/list only copies and a typo in a schema fails
  // at startup rather than on the first list.
  json::Document def(rapidjson::kObjectType);
  auto& a = def.GetAllocator();
  def.AddMember("name", json::str(spec.name, a), a);
  if (!spec.title.empty()) def.AddMember("title", json::str(spec.title, a), a);
  if (!spec.description.empty()) def.AddMember("description", json::str(spec.description, a), a);
  const std::pair<const char*, const JsonText*> fragments[] = {
      {"inputSchema", &spec.input_schema},
      {"outputSchema", &spec.output_schema},
      {"annotations", &spec.annotations},
      {"_meta", &spec.meta},
  };
  for (const auto& [key, text] : fragments) {
    if (text->empty()) continue;
    json::Document frag = parse_or_throw(*text, spec.name + "." + key);
    def.AddMember(json::ref(key), json::Value(frag, a), a);
  }
  tools_.push_back({std::move(spec.name), std::move(def), std::move(spec.handler)});
}

std::optional<std::string> Server::handle(const jsonrpc::Message& msg) {
  // Notifications (notifications/initialized, cancellations) need no action
  // here, and this server never sends requests, so responses are stray.
  if (!msg.is_request()) return std::nullopt;

  const std::string_view method = msg.method();
  if (method == "initialize") return initialize(msg);
  if (method == "ping") return jsonrpc::make_result(msg.id(), json::Value(rapidjson::kObjectType));
  if (method == "tools/list") return list_tools(msg);
  if (method == "tools/call") {
    ToolOutcome out = call(msg.params());
    if (auto* err = std::get_if<RpcError>(&out))
      return jsonrpc::make_error(msg.id(), err->code, err->message);
    return jsonrpc::make_result(msg.id(), std::get<json::Document>(out));
  }
  return jsonrpc::make_error(msg.id(), jsonrpc::kMethodNotFound,
                             "Method not found: " + std::string(method));
}

std::string Server::initialize(const jsonrpc::Message& msg) {
  std::string_view requested;
  if (const json::Value* p = msg.params())
    requested = json::get_string(*p, "protocolVersion").value_or("");

  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  r.AddMember("protocolVersion", json::str(mcp::negotiate(requested), a), a);
  json::Value tools(rapidjson::kObjectType);
  tools.AddMember("listChanged", true, a);
  json::Value caps(rapidjson::kObjectType);
  caps.AddMember("tools", tools, a);
  r.AddMember("capabilities", caps, a);
  json::Value info(rapidjson::kObjectType);
  info.AddMember("name", json::str(name_, a), a);
  info.AddMember("version", json::str(version_, a), a);
  r.AddMember("serverInfo", info, a);
  return jsonrpc::make_result(msg.id(), r);
}

std::string Server::list_tools(const jsonrpc::Message& msg) {
  std::size_t offset = 0;
  if (const json::Value* p = msg.params(); p && json::find(*p, "cursor")) {
    auto cursor = json::get_string(*p, "cursor");
    auto decoded = cursor ? mcp::decode_cursor(*cursor) : std::nullopt;
    if (!decoded || *decoded > tools_.size())
      return jsonrpc::make_error(msg.id(), jsonrpc::kInvalidParams, "Invalid cursor");
    offset = *decoded;
  }
  const std::size_t end =
      page_size_ == 0 ? tools_.size() : std::min(tools_.size(), offset + page_size_);

  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (std::size_t i = offset; i < end; ++i) list.PushBack(json::Value(tools_[i].definition, a), a);
  r.AddMember("tools", list, a);
  if (end < tools_.size()) r.AddMember("nextCursor", json::str(mcp::encode_cursor(end), a), a);
  return jsonrpc::make_result(msg.id(), r);
}

ToolOutcome Server::call(const json::Value* params) {
  auto name = params ? json::get_string(*params, "name") : std::nullopt;
  if (!name) return RpcError{jsonrpc::kInvalidParams, "Missing tool name"};
  auto tool = std::find_if(tools_.begin(), tools_.end(), [&](const Tool& t) { return t.name == *name; });
  if (tool == tools_.end()) return RpcError{jsonrpc::kInvalidParams, "Unknown tool: " + std::string(*name)};

  const json::Value empty(rapidjson::kObjectType);
  const json::Value* args = json::find(*params, "arguments");
  if (!args) args = &empty;
  if (!args->IsObject()) return RpcError{jsonrpc::kInvalidParams, "\"arguments\" must be an object"};
  try {
    return tool->handler(*args);
  } catch (const std::exception& e) {
    // A throwing handler is a bug in the server, not in the caller's input.
    return RpcError{jsonrpc::kInternalError, std::string("Internal error: ") + e.what()};
  }
}

// ---------------------------------------------------------------------------
// stdio transport

void Server::write_line(std::string_view line) {
  std::lock_guard lock(stdout_mutex_);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void Server::write_raw_line(std::string_view line) {
  if (stdio_) write_line(line);
}

int Server::serve_stdio() {
  stdio_ = true;
  // One thread per request, so a slow call (sleep) never holds up the others.
  // std::list keeps each entry in place, so a thread can flag its own entry.
  struct Worker {
    std::atomic<bool> done{false};
    std::thread thread;
  };
  std::list<Worker> workers;
  auto reap = [&](bool all) {
    for (auto it = workers.begin(); it != workers.end();) {
      if (all || it->done) {
        it->thread.join();
        it = workers.erase(it);
      } else {
        ++it;
      }
    }
  };

  std::string line;
  while (std::getline(std::cin, line)) {
    reap(false);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    jsonrpc::Parsed parsed = jsonrpc::parse(line);
    if (parsed.batch) {
      write_line(jsonrpc::make_error(json::Value(), jsonrpc::kInvalidRequest,
                                     "Invalid Request: batches are not supported"));
      continue;
    }
    for (const std::string& err : parsed.errors) write_line(err);
    for (jsonrpc::Message& msg : parsed.messages) {
      if (!msg.is_request()) {
        handle(msg);
        continue;
      }
      Worker& w = workers.emplace_back();
      w.thread = std::thread([this, &w, m = std::move(msg)] {
        if (auto reply = handle(m)) write_line(*reply);
        w.done = true;
      });
    }
  }
  reap(true);
  return 0;
}

// ---------------------------------------------------------------------------
// Streamable HTTP transport

namespace {

constexpr const char* kJson = "application/json";

/// Live session ids; httplib handlers run concurrently, hence the lock.
class Sessions {
 public:
  std::string create() {
    std::string id = random_hex(16);
    std::lock_guard lock(mutex_);
    ids_.insert(id);
    return id;
  }
  bool contains(const std::string& id) {
    std::lock_guard lock(mutex_);
    return ids_.count(id) != 0;
  }
  bool erase(const std::string& id) {
    std::lock_guard lock(mutex_);
    return ids_.erase(id) != 0;
  }

 private:
  std::mutex mutex_;
  std::unordered_set<std::string> ids_;
};

/// 0 when the request names a live session, else the status to answer with:
/// 400 without an id (spec 2025-06-18, "Session Management"), 404 for an
/// unknown or ended one, which tells the client to initialize again.
int session_status(const httplib::Request& req, Sessions& sessions) {
  if (!req.has_header("Mcp-Session-Id")) return 400;
  return sessions.contains(req.get_header_value("Mcp-Session-Id")) ? 0 : 404;
}

void reply_error(httplib::Response& res, int status, std::string body) {
  res.status = status;
  res.set_content(std::move(body), kJson);
}

void reply_status(httplib::Response& res, int status, std::string_view why) {
  reply_error(res, status,
              jsonrpc::make_error(json::Value(), jsonrpc::kInvalidRequest, std::string(why)));
}

}  // namespace

int Server::serve_http(int port) {
  // Block the stop signals before httplib starts its threads, so they all
  // inherit the mask and only the sigwait below ever receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  Sessions sessions;
  httplib::Server http;
  // httplib takes ownership of the raw pointer (its API demands one). Each
  // keep-alive connection occupies a worker, and slow calls must not starve
  // the others, so the pool is well above the default.
  http.new_task_queue = [] { return new httplib::ThreadPool(64); };
  http.set_tcp_nodelay(true);
  http.set_keep_alive_max_count(10000);

  http.Post("/mcp", [&](const httplib::Request& req, httplib::Response& res) {
    if (auto v = req.get_header_value("MCP-Protocol-Version"); !v.empty() && !mcp::is_supported(v))
      return reply_status(res, 400, "Unsupported MCP-Protocol-Version: " + v);
    jsonrpc::Parsed parsed = jsonrpc::parse(req.body);
    if (parsed.batch) return reply_status(res, 400, "Invalid Request: batches are not supported");
    if (parsed.messages.empty()) return reply_error(res, 400, parsed.errors.front());

    const jsonrpc::Message& msg = parsed.messages.front();
    if (msg.is_request() && msg.method() == "initialize") {
      res.set_header("Mcp-Session-Id", sessions.create());
      res.set_content(*handle(msg), kJson);
      return;
    }
    if (int status = session_status(req, sessions))
      return reply_status(res, status, status == 400 ? "Missing Mcp-Session-Id" : "Unknown session");
    if (auto reply = handle(msg))
      res.set_content(*reply, kJson);
    else
      res.status = 202;
  });
  http.Delete("/mcp", [&](const httplib::Request& req, httplib::Response& res) {
    if (int status = session_status(req, sessions)) {
      res.status = status;
      return;
    }
    sessions.erase(req.get_header_value("Mcp-Session-Id"));
    res.status = 200;
  });
  // No server-initiated messages, so no standalone SSE stream (spec: 405).
  http.Get("/mcp", [](const httplib::Request&, httplib::Response& res) {
    res.status = 405;
    res.set_header("Allow", "POST, DELETE");
  });

  const int bound = port == 0 ? http.bind_to_any_port("127.0.0.1")
                              : (http.bind_to_port("127.0.0.1", port) ? port : -1);
  if (bound < 0) {
    log_line("cannot bind 127.0.0.1:" + std::to_string(port));
    return 1;
  }
  std::printf("listening http://127.0.0.1:%d/mcp\n", bound);
  std::fflush(stdout);

  std::atomic<bool> listening_done{false};
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    // stop() is a no-op until listen has started, so retry until it returns.
    while (!listening_done) {
      http.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  // Returns after stop(), once in-flight handlers have finished.
  const bool ok = http.listen_after_bind();
  listening_done = true;
  if (!ok) pthread_kill(stopper.native_handle(), SIGTERM);  // wake sigwait
  stopper.join();
  return 0;
}

// ---------------------------------------------------------------------------
// Command line

int run_main(Server& server, int argc, char** argv, const std::vector<Flag>& extra) {
  const std::string prog = argc > 0 ? argv[0] : "server";
  auto usage = [&](std::ostream& out) {
    auto row = [&](const std::string& left, std::string_view help) {
      out << "  " << std::left << std::setw(20) << left << help << "\n";
    };
    out << "usage: " << prog << " [--http PORT]";
    for (const Flag& f : extra) out << " [" << f.name << " VALUE]";
    out << "\n";
    row("(default)", "serve MCP over stdin/stdout");
    row("--http PORT", "serve Streamable HTTP on 127.0.0.1:PORT/mcp (0 = any free port)");
    for (const Flag& f : extra) row(f.name + " VALUE", f.help);
  };
  auto fail = [&](const std::string& why) {
    std::cerr << prog << ": " << why << "\n";
    usage(std::cerr);
    return 2;
  };

  // A client that goes away mid-reply must not kill the server with SIGPIPE;
  // the failed write is enough.
  signal(SIGPIPE, SIG_IGN);

  std::optional<int> http_port;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      usage(std::cout);
      return 0;
    }
    if (i + 1 >= argc) return fail("missing value for " + std::string(flag));
    const std::string_view value = argv[++i];
    if (flag == "--http") {
      int port = -1;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), port);
      if (ec != std::errc() || p != value.data() + value.size() || port < 0 || port > 65535)
        return fail("invalid port: " + std::string(value));
      http_port = port;
      continue;
    }
    auto f = std::find_if(extra.begin(), extra.end(), [&](const Flag& e) { return e.name == flag; });
    if (f == extra.end()) return fail("unknown flag: " + std::string(flag));
    try {
      if (!f->apply(value)) return fail("invalid value for " + f->name + ": " + std::string(value));
    } catch (const std::exception& e) {  // e.g. a flag that adds a tool twice
      return fail(e.what());
    }
  }
  return http_port ? server.serve_http(*http_port) : server.serve_stdio();
}

}  // namespace mcpgw::examples
