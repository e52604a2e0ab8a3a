// The upstream of scripts/bench's callpath section: an MCP server with one
// tool, `echo`, that costs as little per call as an MCP server can, so that
// what the bench measures behind the gateway is the gateway. One thread, no
// timers, no worker pool, no SSE: every answer is one JSON body, parsed in
// place and written with RapidJSON's plain writer. A second tool, `blob`,
// answers `{"bytes": N}` with an image of N base64 characters (what a
// screenshot costs a gateway that relays it; the bench of large answers). Protocol 2025-11-25 (and
// the older session revisions it is asked for); server/discover is unknown
// to it, so the gateway uses a session, as with the example toolbox.
//   echo_upstream               stdio: newline-delimited JSON-RPC
//   echo_upstream --http PORT   Streamable HTTP on 127.0.0.1:PORT/mcp (0: a
//                               free port; prints "listening URL" on stdout)
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr std::array<std::string_view, 4> kVersions = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
constexpr std::string_view kEchoSchema =
    R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})";
constexpr std::string_view kBlobSchema =
    R"({"type":"object","properties":{"bytes":{"type":"integer"}},"required":["bytes"]})";
constexpr std::size_t kMaxBody = std::size_t{1} << 20;
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;

void key(Writer& w, std::string_view k) { w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size())); }
void str(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

std::string_view member_string(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return {};
  auto it = v.FindMember(name);
  if (it == v.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

const rapidjson::Value* member(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(name);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

/// {"jsonrpc":"2.0","id":<id>,"error":{...}}; a null id when the request's
/// could not be read.
std::string error_body(const rapidjson::Value* id, int code, std::string_view message) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartObject();
  key(w, "jsonrpc");
  str(w, "2.0");
  key(w, "id");
  if (id) id->Accept(w); else w.Null();
  key(w, "error");
  w.StartObject();
  key(w, "code");
  w.Int(code);
  key(w, "message");
  str(w, message);
  w.EndObject();
  w.EndObject();
  return {sb.GetString(), sb.GetSize()};
}

void initialize_result(Writer& w, const rapidjson::Value* params) {
  std::string_view asked = params ? member_string(*params, "protocolVersion") : std::string_view{};
  std::string_view version = kVersions[0];
  for (auto v : kVersions)
    if (v == asked) version = v;
  w.StartObject();
  key(w, "protocolVersion");
  str(w, version);
  key(w, "capabilities");
  w.StartObject();
  key(w, "tools");
  w.StartObject();
  w.EndObject();
  w.EndObject();
  key(w, "serverInfo");
  w.StartObject();
  key(w, "name");
  str(w, "echo-upstream");
  key(w, "version");
  str(w, "1");
  w.EndObject();
  w.EndObject();
}

void tools_list_result(Writer& w) {
  w.StartObject();
  key(w, "tools");
  w.StartArray();
  w.StartObject();
  key(w, "name");
  str(w, "echo");
  key(w, "description");
  str(w, "Returns its text unchanged.");
  key(w, "inputSchema");
  w.RawValue(kEchoSchema.data(), kEchoSchema.size(), rapidjson::kObjectType);
  w.EndObject();
  w.StartObject();
  key(w, "name");
  str(w, "blob");
  key(w, "description");
  str(w, "Returns an image of the asked number of base64 characters.");
  key(w, "inputSchema");
  w.RawValue(kBlobSchema.data(), kBlobSchema.size(), rapidjson::kObjectType);
  w.EndObject();
  w.EndArray();
  w.EndObject();
}

/// The blob tool's result: content [{type image, data, mimeType}]. The data
/// (base64 characters, which need no escaping) is written as it is, so the
/// upstream's cost per call is a copy, not an escaping writer's pass.
void blob_result(Writer& w, const rapidjson::Value* args) {
  const rapidjson::Value* bytes = args ? member(*args, "bytes") : nullptr;
  std::size_t n = bytes && bytes->IsUint64() ? static_cast<std::size_t>(bytes->GetUint64()) : 0;
  std::string data(n + 2, 'A');
  data.front() = data.back() = '"';
  w.StartObject();
  key(w, "content");
  w.StartArray();
  w.StartObject();
  key(w, "type");
  str(w, "image");
  key(w, "mimeType");
  str(w, "image/png");
  key(w, "data");
  w.RawValue(data.data(), data.size(), rapidjson::kStringType);
  w.EndObject();
  w.EndArray();
  w.EndObject();
}

/// The echo tool's result, the shape the toolbox's echo answers with; a
/// call without a string `text` is a tool error, as there.
void echo_result(Writer& w, const rapidjson::Value* args) {
  const rapidjson::Value* text = args ? member(*args, "text") : nullptr;
  bool ok = text && text->IsString();
  w.StartObject();
  key(w, "content");
  w.StartArray();
  w.StartObject();
  key(w, "type");
  str(w, "text");
  key(w, "text");
  if (ok) text->Accept(w); else str(w, "Missing required argument: text");
  w.EndObject();
  w.EndArray();
  if (!ok) {
    key(w, "isError");
    w.Bool(true);
  }
  w.EndObject();
}

/// What one JSON-RPC message gets back.
struct Answer {
  std::string body;         ///< the JSON-RPC answer; empty for a notification or a response
  bool initialized = false; ///< a successful initialize (HTTP: a new session)
  bool malformed = false;   ///< not a JSON-RPC message at all (HTTP: 400)
};

/// Answers the message in `text`, a NUL-terminated buffer that is parsed in
/// place (and so overwritten).
Answer answer(char* text) {
  rapidjson::Document doc;
  doc.ParseInsitu(text);
  if (doc.HasParseError()) return {error_body(nullptr, kParseError, "Parse error"), false, true};
  const rapidjson::Value* id = member(doc, "id");
  std::string_view method = member_string(doc, "method");
  if (method.empty()) {
    if (doc.IsObject() && id && (member(doc, "result") || member(doc, "error"))) return {};  // a response
    return {error_body(id, kInvalidRequest, "Invalid Request"), false, true};
  }
  if (!id) return {};  // a notification
  const rapidjson::Value* params = member(doc, "params");
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartObject();
  key(w, "jsonrpc");
  str(w, "2.0");
  key(w, "id");
  id->Accept(w);
  key(w, "result");
  bool initialized = false;
  if (method == "tools/call") {
    std::string_view name = params ? member_string(*params, "name") : std::string_view{};
    if (name == "echo") echo_result(w, member(*params, "arguments"));
    else if (name == "blob") blob_result(w, member(*params, "arguments"));
    else return {error_body(id, kInvalidParams, "Unknown tool")};
  } else if (method == "initialize") {
    initialize_result(w, params);
    initialized = true;
  } else if (method == "tools/list") {
    tools_list_result(w);
  } else if (method == "ping") {
    w.StartObject();
    w.EndObject();
  } else {
    return {error_body(id, kMethodNotFound, "Method not found")};
  }
  w.EndObject();
  return {{sb.GetString(), sb.GetSize()}, initialized};
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

/// Reads whatever stdin has, answers every whole line in it, and writes the
/// answers in one write: a gateway that pipelines calls gets one read and
/// one write per batch.
int serve_stdio() {
  std::string in;
  std::string out;
  std::array<char, 65536> chunk{};
  for (;;) {
    ssize_t n = ::read(0, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    in.append(chunk.data(), static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = in.find('\n', start)) != std::string::npos; start = nl + 1) {
      in[nl] = '\0';
      if (nl == start) continue;
      Answer a = answer(in.data() + start);
      if (a.body.empty()) continue;
      out += a.body;
      out += '\n';
    }
    in.erase(0, start);
    if (in.size() > kMaxBody) return 1;
    if (!out.empty() && !write_all(1, out)) return 0;
    out.clear();
  }
}

/// Streamable HTTP: POST /mcp answered as JSON, sessions from initialize,
/// DELETE ends one; no GET stream (405, which the spec allows).
class HttpServer {
 public:
  asio::awaitable<void> accept(tcp::acceptor& acceptor) {
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec == asio::error::operation_aborted) co_return;
      if (ec) continue;
      socket.set_option(tcp::no_delay(true));
      asio::co_spawn(acceptor.get_executor(), serve(std::move(socket)), asio::detached);
    }
  }

 private:
  using Request = http::request<http::string_body>;
  using Response = http::response<http::string_body>;

  asio::awaitable<void> serve(tcp::socket socket) {
    boost::beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(kMaxBody);
      auto [rec, rn] = co_await http::async_read(socket, buffer, parser, asio::as_tuple(asio::use_awaitable));
      if (rec) co_return;
      Request req = parser.release();
      Response res = respond(req);
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      auto [wec, wn] = co_await http::async_write(socket, res, asio::as_tuple(asio::use_awaitable));
      if (wec || !res.keep_alive()) co_return;
    }
  }

  static Response reply(const Request& req, http::status status, std::string body = {}) {
    Response res{status, req.version()};
    if (!body.empty()) res.set(http::field::content_type, "application/json");
    res.body() = std::move(body);
    return res;
  }

  Response respond(Request& req) {
    if (req.target() != "/mcp") return reply(req, http::status::not_found);
    std::string session(req["Mcp-Session-Id"]);
    if (req.method() == http::verb::delete_) {
      if (session.empty()) return reply(req, http::status::bad_request);
      return reply(req, sessions_.erase(session) ? http::status::ok : http::status::not_found);
    }
    if (req.method() != http::verb::post) {
      Response res = reply(req, http::status::method_not_allowed);
      res.set(http::field::allow, "POST, DELETE");
      return res;
    }
    Answer a = answer(req.body().data());
    if (a.malformed) return reply(req, http::status::bad_request, std::move(a.body));
    if (a.initialized) {
      std::string id = "echo-" + std::to_string(++sessions_made_);
      sessions_.insert(id);
      Response res = reply(req, http::status::ok, std::move(a.body));
      res.set("Mcp-Session-Id", id);
      return res;
    }
    if (session.empty())
      return reply(req, http::status::bad_request,
                   error_body(nullptr, kInvalidRequest, "Bad Request: Mcp-Session-Id header is required"));
    if (!sessions_.contains(session))
      return reply(req, http::status::not_found, error_body(nullptr, kInvalidRequest, "Session not found"));
    if (a.body.empty()) return reply(req, http::status::accepted);
    return reply(req, http::status::ok, std::move(a.body));
  }

  std::unordered_set<std::string> sessions_;
  unsigned long sessions_made_ = 0;
};

int serve_http(unsigned short port) {
  asio::io_context io(1);
  tcp::acceptor acceptor(io);
  tcp::endpoint at(asio::ip::make_address("127.0.0.1"), port);
  boost::system::error_code ec;
  acceptor.open(at.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(at, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    std::fprintf(stderr, "echo_upstream: cannot listen on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
    return 1;
  }
  std::printf("listening http://127.0.0.1:%u/mcp\n", acceptor.local_endpoint().port());
  std::fflush(stdout);
  HttpServer server;
  asio::co_spawn(io, server.accept(acceptor), asio::detached);
  io.run();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  if (argc == 1) return serve_stdio();
  if (argc == 3 && std::strcmp(argv[1], "--http") == 0) {
    char* end = nullptr;
    unsigned long port = std::strtoul(argv[2], &end, 10);
    if (*argv[2] != '\0' && *end == '\0' && port <= 65535) return serve_http(static_cast<unsigned short>(port));
  }
  std::fprintf(stderr, "usage: echo_upstream [--http PORT]\n");
  return 2;
}
