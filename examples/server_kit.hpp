#pragma once
// A tiny MCP server framework for the example servers: register tools, then
// serve them over stdio or Streamable HTTP. It implements just enough of MCP
// (initialize, ping, tools/list, tools/call) to be a realistic upstream for
// the gateway and a readable starting point for writing one.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "jsonrpc/json.hpp"
#include "jsonrpc/message.hpp"

namespace mcpgw::examples {

/// A JSON-RPC error a tool handler returns instead of a CallToolResult.
struct RpcError {
  int code = jsonrpc::kInternalError;
  std::string message;
};

/// What a tool handler produces: a CallToolResult document or a JSON-RPC error.
using ToolOutcome = std::variant<json::Document, RpcError>;

/// Runs one tool call; `args` is always an object. May run on any thread,
/// concurrently with other calls.
using ToolHandler = std::function<ToolOutcome(const json::Value& args)>;

/// A JSON fragment of a tool definition, written as JSON text or taken from a
/// RapidJSON value. Empty means "leave the field out".
class JsonText {
 public:
  JsonText() = default;
  JsonText(const char* text) : text_(text) {}
  JsonText(std::string text) : text_(std::move(text)) {}
  JsonText(const json::Value& value) : text_(json::write(value)) {}

  bool empty() const { return text_.empty(); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

/// Everything `tools/list` says about a tool, plus the code that runs it.
/// Meant for designated initializers; every field has an initializer, so
/// any may be left out without a -Wmissing-field-initializers warning.
struct ToolSpec {
  std::string name{};
  std::string title{};
  std::string description{};
  JsonText input_schema = R"({"type":"object","properties":{},"additionalProperties":false})";
  JsonText output_schema{};
  JsonText annotations{};
  JsonText meta{};  ///< The tool's `_meta`.
  ToolHandler handler{};
};

/// A CallToolResult with one text content item.
json::Document text_result(std::string_view text);
/// Sets member `key` of `result` to `value` (JSON text), e.g. structuredContent.
void set_json(json::Document& result, std::string_view key, std::string_view json_text);

/// Argument `key` as a number (integer or not), if present and numeric.
std::optional<double> get_number(const json::Value& args, std::string_view key);
/// Argument `key` as an integer, if present and an integer.
std::optional<std::int64_t> get_int(const json::Value& args, std::string_view key);

/// Shortest text for a number: "5" rather than "5.000000".
std::string format_number(double v);

/// An MCP server: a set of tools and the protocol logic that exposes them.
/// Register tools before serving; serving never changes them.
class Server {
 public:
  /// `name` and `version` become the `serverInfo` of the initialize result.
  Server(std::string name, std::string version);

  /// Adds a tool; throws std::invalid_argument on a duplicate name or a JSON
  /// fragment that does not parse (both are programming errors).
  void add_tool(ToolSpec spec);
  /// Page size of tools/list; 0 (the default) returns every tool at once.
  void set_page_size(std::size_t n) { page_size_ = n; }
  /// Replaces serverInfo.name.
  void set_name(std::string name) { name_ = std::move(name); }

  /// Answers one message: the serialised response for a request, nullopt for
  /// a notification or a response.
  std::optional<std::string> handle(const jsonrpc::Message& msg);

  /// Serves newline-delimited JSON-RPC on stdin/stdout until EOF, then waits
  /// for calls still running. Returns the exit code.
  int serve_stdio();
  /// Serves Streamable HTTP on 127.0.0.1:`port` (0 = any free port) at /mcp,
  /// announcing the address on stdout, until SIGTERM or SIGINT.
  int serve_http(int port);

  /// Writes `line` to stdout as is while serving stdio (ignored over HTTP):
  /// lets a test double show how a client copes with noise on the stream.
  void write_raw_line(std::string_view line);

 private:
  struct Tool {
    std::string name;
    json::Document definition;
    ToolHandler handler;
  };

  ToolOutcome call(const json::Value* params);
  std::string initialize(const jsonrpc::Message& msg);
  std::string list_tools(const jsonrpc::Message& msg);
  void write_line(std::string_view line);

  std::string name_;
  std::string version_;
  std::vector<Tool> tools_;
  std::size_t page_size_ = 0;
  bool stdio_ = false;
  std::mutex stdout_mutex_;  // one writer at a time keeps lines whole
};

/// A command-line flag of one server, taking one value. `apply` returns
/// false when the value is invalid.
struct Flag {
  std::string name;  ///< e.g. "--tools"
  std::string help;
  std::function<bool(std::string_view value)> apply;
};

/// The shared entry point: parses `--http PORT` (default: stdio), `--help`
/// and `extra` flags, then serves. Returns the process exit code (2 on a
/// usage error).
int run_main(Server& server, int argc, char** argv, const std::vector<Flag>& extra = {});

}  // namespace mcpgw::examples
