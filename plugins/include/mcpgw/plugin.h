/*
 * mcpgw plugin ABI, version 1: the only header a composite-tool plugin needs.
 *
 * A plugin is a shared library that exports one C function,
 *
 *     const mcpgw_plugin* mcpgw_plugin_v1(void);
 *
 * returning a descriptor that lives as long as the library is loaded. The
 * gateway loads it with dlopen(RTLD_NOW | RTLD_LOCAL), checks `abi_version`,
 * calls `init` once with the plugin's `config` from gateway.yaml, lists its
 * tools, and calls `call` for every client call of one of them, from many
 * threads at once. On shutdown or reload it calls `shutdown` after the last
 * call has returned, then unloads the library.
 *
 * Stability. Everything here is C: fixed-width fields, no C++ types, no
 * structs passed by value. Later versions only append fields to the end of
 * `mcpgw_plugin` and `mcpgw_host`; each struct starts with its own size, so
 * either side can tell which fields the other knows. A breaking change would
 * get a new entry point (`mcpgw_plugin_v2`), and the gateway would keep
 * loading v1 plugins.
 *
 * Data. Everything structured crosses as UTF-8 JSON text, NUL-terminated.
 *
 * Ownership, one rule each way:
 *   - A `const char*` argument is borrowed: valid until the function it was
 *     passed to returns. Copy what you keep.
 *   - A `char*` that a function returns, or hands to a callback, belongs to
 *     the receiver, and was allocated with `host->alloc_string`; the
 *     receiver releases it with `host->free_string` (the gateway does so for
 *     the strings a plugin returns). One allocator on both sides means a
 *     plugin built with another C runtime or allocator still works.
 *
 * Threads. `call` runs on gateway worker threads, concurrently; a plugin's
 * state must be safe for that. The host functions may be called from any
 * thread, including threads the plugin starts, as long as the `mcpgw_call`
 * they name is still running (see `mcpgw_call`).
 */
#ifndef MCPGW_PLUGIN_H
#define MCPGW_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version this header describes. */
#define MCPGW_PLUGIN_ABI_VERSION 1

/** Name of the entry point the gateway looks up. */
#define MCPGW_PLUGIN_ENTRY "mcpgw_plugin_v1"

/** Makes a symbol visible even when the plugin builds with -fvisibility=hidden. */
#if defined(__GNUC__)
#define MCPGW_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define MCPGW_PLUGIN_EXPORT
#endif

/** Log levels for `mcpgw_host.log`. */
typedef enum mcpgw_log_level {
  MCPGW_LOG_DEBUG = 0,
  MCPGW_LOG_INFO = 1,
  MCPGW_LOG_WARN = 2,
  MCPGW_LOG_ERROR = 3
} mcpgw_log_level;

/**
 * One running client call of a plugin tool. Opaque; the gateway creates it
 * before `call` and destroys it after `call` has returned and every
 * asynchronous tool call started on it has completed (the gateway waits for
 * those). Using it after that is undefined.
 */
typedef struct mcpgw_call mcpgw_call;

/** Private to the gateway: what one loaded plugin's host functions act on. */
typedef struct mcpgw_host_state mcpgw_host_state;

/**
 * Completion of `call_tool_async`. Runs exactly once, on a gateway thread,
 * before the `mcpgw_call` ends. `result_json` is a CallToolResult owned by
 * the callee: release it with `host->free_string`.
 */
typedef void (*mcpgw_tool_done)(void* user_data, char* result_json);

/**
 * What the gateway offers a plugin. Valid from `init` until `shutdown`
 * returns; the same pointer is passed to every call.
 */
typedef struct mcpgw_host {
  /** sizeof(mcpgw_host) in the gateway; fields past it do not exist. */
  uint32_t struct_size;
  /** The ABI version the gateway implements (>= the plugin's). */
  uint32_t abi_version;
  mcpgw_host_state* state;

  /** A NUL-terminated copy of `size` bytes of `data`, owned by the caller. */
  char* (*alloc_string)(const char* data, size_t size);
  /** Releases a string from `alloc_string` (or returned by a host function); NULL is ignored. */
  void (*free_string)(char* s);

  /** Writes `message` to the gateway's log, tagged with the plugin's name. */
  void (*log)(const struct mcpgw_host* host, mcpgw_log_level level, const char* message);

  /**
   * Calls tool `tool` of upstream server `server` (the names from
   * gateway.yaml and the upstream's own tool name; filters and modes do not
   * apply to plugins) with `arguments_json` (an object, or NULL for none),
   * and waits for it. Bounded by the server's timeout_ms and cancelled with
   * the client's call. Returns a CallToolResult as JSON, owned by the
   * caller; never NULL. Failures (unknown server, server down, timeout, a
   * JSON-RPC error) come back as `{"isError": true, "content": [...]}` whose
   * text names the server and the cause.
   */
  char* (*call_tool)(mcpgw_call* call, const char* server, const char* tool, const char* arguments_json);

  /**
   * The same call, without waiting: returns at once and runs `done` with the
   * result when it completes (on another thread, or on this one before
   * returning when it fails at once). Start several to run them in parallel.
   */
  void (*call_tool_async)(mcpgw_call* call, const char* server, const char* tool, const char* arguments_json,
                          mcpgw_tool_done done, void* user_data);

  /** The authenticated principal of the client ("" without auth). Borrowed, valid while the call runs. */
  const char* (*principal)(const mcpgw_call* call);
  /** The client's mode ("all" or a configured mode). Borrowed, valid while the call runs. */
  const char* (*mode)(const mcpgw_call* call);
  /** Non-zero once the client has cancelled the call (or it timed out); stop early when it is. */
  int (*cancelled)(const mcpgw_call* call);

  /*
   * Client input (appended in mcpgw 0.3; check `struct_size` before use).
   *
   * A handler that needs the client's input (an elicitation, a sampling, the
   * client's roots) returns, instead of a CallToolResult,
   *
   *   {"resultType": "input_required",
   *    "inputRequests": {"<key>": {"method": "elicitation/create", "params": {...}}, ...},
   *    "state": <any JSON>}
   *
   * (methods: elicitation/create, sampling/createMessage, roots/list). The
   * gateway asks the client in whatever form it speaks (requests on the
   * call's stream, an input_required result with a signed requestState, a
   * suspended saga) and calls the handler again, with the same arguments,
   * once every request is answered. The handler keeps nothing between the
   * rounds: what it needs comes back through the two functions below. A
   * round may ask again; the gateway stops after 16 rounds.
   */

  /**
   * The answers of every earlier round, as a JSON object: key → the client's
   * result (ElicitResult, CreateMessageResult or ListRootsResult), or
   * `{"error": {"code", "message"}}` for a request the client could not
   * take. "{}" in the first round. Owned by the caller (`free_string`).
   */
  char* (*input_responses)(const mcpgw_call* call);
  /**
   * The `state` the previous round returned with its input requests, as
   * JSON; "null" in the first round. Owned by the caller (`free_string`).
   * After a gateway restart (or on another gateway process) the call is run
   * again from its first round, with the answers already given.
   */
  char* (*input_state)(const mcpgw_call* call);
} mcpgw_host;

/** The plugin's descriptor, returned by `mcpgw_plugin_v1`. */
typedef struct mcpgw_plugin {
  /** sizeof(mcpgw_plugin) as the plugin was built. */
  uint32_t struct_size;
  /** MCPGW_PLUGIN_ABI_VERSION as the plugin was built. */
  uint32_t abi_version;
  /** Shown in logs and `mcpgw check`: [A-Za-z0-9_.-]+. */
  const char* name;
  const char* version;

  /**
   * Called once, before anything else, with the plugin's `config` from
   * gateway.yaml as a JSON object. Returns the plugin's state (passed to
   * every other function; may be NULL if the plugin keeps none) and leaves
   * `*error` NULL; on failure sets `*error` to a message from
   * `host->alloc_string`, which the gateway releases and logs, and the
   * plugin is not loaded (`shutdown` is not called).
   */
  void* (*init)(const mcpgw_host* host, const char* config_json, char** error);

  /**
   * The plugin's tools: a JSON array of MCP Tool objects (`name`,
   * `description`, `inputSchema`, optional `title`, `outputSchema`,
   * `annotations`, `_meta`; slices go in `_meta.slices`, as for upstream
   * tools). Called once after `init`. Returned string from `alloc_string`;
   * the gateway releases it.
   */
  char* (*list_tools)(void* state);

  /**
   * Runs tool `tool` with `arguments_json` (always an object). Returns a
   * CallToolResult as JSON (`content`, optional `structuredContent`,
   * `isError`, `_meta` with an optional `nextTool`) from `alloc_string`;
   * NULL or text that is not a JSON object becomes an error result for the
   * client. Must not return before its asynchronous calls have completed
   * their use of plugin memory.
   */
  char* (*call)(void* state, mcpgw_call* call, const char* tool, const char* arguments_json);

  /** Called once after the last call has returned; releases the state. May be NULL. */
  void (*shutdown)(void* state);
} mcpgw_plugin;

/** The entry point's type. */
typedef const mcpgw_plugin* (*mcpgw_plugin_entry_v1)(void);

#ifdef __cplusplus
}
#endif

#endif /* MCPGW_PLUGIN_H */
