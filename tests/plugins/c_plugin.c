/*
 * A plugin in plain C against plugin.h alone: the ABI needs no C++. It
 * exercises the ownership rules (every string from the host is released
 * with free_string; every string returned comes from alloc_string) and
 * asynchronous calls completed on gateway threads.
 *
 * config: {"server": "toolbox"}  (the upstream c_parallel calls)
 */
#include <mcpgw/plugin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct state {
  const mcpgw_host* host;
  char server[64];
} state;

static char* give(const state* s, const char* text) { return s->host->alloc_string(text, strlen(text)); }

static void* init(const mcpgw_host* host, const char* config_json, char** error) {
  state* s = calloc(1, sizeof *s);
  if (!s) {
    *error = host->alloc_string("out of memory", 13);
    return NULL;
  }
  s->host = host;
  /* A real plugin would use a JSON parser; the tests' config is fixed. */
  const char* at = strstr(config_json, "\"server\":\"");
  if (at) sscanf(at + 10, "%63[^\"]", s->server);
  else strcpy(s->server, "toolbox");
  host->log(host, MCPGW_LOG_INFO, "C plugin ready");
  return s;
}

static char* list_tools(void* st) {
  return give(st,
              "[{\"name\":\"c_echo\",\"description\":\"Returns its arguments as text (C plugin).\","
              "\"inputSchema\":{\"type\":\"object\"}},"
              "{\"name\":\"c_parallel\",\"description\":\"Two upstream sleeps at once (C plugin).\","
              "\"inputSchema\":{\"type\":\"object\"}},"
              "{\"name\":\"c_null\",\"description\":\"Returns NULL.\",\"inputSchema\":{\"type\":\"object\"}},"
              "{\"name\":\"c_garbage\",\"description\":\"Returns text that is not JSON.\","
              "\"inputSchema\":{\"type\":\"object\"}}]");
}

typedef struct join {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int left;
  char* results[2];
} join;

typedef struct slot {
  join* j;
  int index;
} slot;

static void done(void* user, char* result_json) {
  slot* sl = user;
  pthread_mutex_lock(&sl->j->mu);
  sl->j->results[sl->index] = result_json; /* ours now: released below */
  if (--sl->j->left == 0) pthread_cond_signal(&sl->j->cv);
  pthread_mutex_unlock(&sl->j->mu);
}

static char* call(void* st, mcpgw_call* c, const char* tool, const char* arguments_json) {
  const state* s = st;
  const mcpgw_host* h = s->host;
  if (strcmp(tool, "c_echo") == 0) {
    const char* prefix = "{\"content\":[{\"type\":\"text\",\"text\":\"";
    size_t n = strlen(prefix) + strlen(arguments_json) * 2 + 8;
    char* buf = malloc(n);
    char* p = buf + sprintf(buf, "%s", prefix);
    for (const char* a = arguments_json; *a; ++a) { /* escape quotes and backslashes for the JSON string */
      if (*a == '"' || *a == '\\') *p++ = '\\';
      *p++ = *a;
    }
    strcpy(p, "\"}]}");
    char* out = give(s, buf);
    free(buf);
    return out;
  }
  if (strcmp(tool, "c_parallel") == 0) {
    join j = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 2, {NULL, NULL}};
    slot slots[2] = {{&j, 0}, {&j, 1}};
    for (int i = 0; i < 2; ++i) h->call_tool_async(c, s->server, "sleep", "{\"ms\":300}", done, &slots[i]);
    pthread_mutex_lock(&j.mu);
    while (j.left > 0) pthread_cond_wait(&j.cv, &j.mu);
    pthread_mutex_unlock(&j.mu);
    size_t n = strlen(j.results[0]) + strlen(j.results[1]) + 64;
    char* buf = malloc(n);
    snprintf(buf, n, "{\"content\":[],\"structuredContent\":{\"results\":[%s,%s]}}", j.results[0], j.results[1]);
    h->free_string(j.results[0]);
    h->free_string(j.results[1]);
    char* out = give(s, buf);
    free(buf);
    return out;
  }
  if (strcmp(tool, "c_garbage") == 0) return give(s, "this is not JSON");
  return NULL; /* c_null, and anything else */
}

static void shutdown(void* st) { free(st); }

static const mcpgw_plugin descriptor = {
    sizeof(mcpgw_plugin), MCPGW_PLUGIN_ABI_VERSION, "test_c_plugin", "0.1.0", init, list_tools, call, shutdown};

MCPGW_PLUGIN_EXPORT const mcpgw_plugin* mcpgw_plugin_v1(void) { return &descriptor; }
