/*
 * A plugin that does, on request, what first versions of plugins do:
 * crash, abort, exit, spin, leak, print. Built by the isolation tests at
 * test time against the installed <mcpgw/plugin.h>, like a user's plugin.
 *
 * Compile-time: -DPLUGIN_NAME='"bad"' -DPLUGIN_TAG='"1"' (what `version` says).
 * config: {"fail_init_if": "/path"}: init fails while that file exists.
 */
#include <mcpgw/plugin.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PLUGIN_NAME
#define PLUGIN_NAME "bad"
#endif
#ifndef PLUGIN_TAG
#define PLUGIN_TAG "1"
#endif

typedef struct state {
  const mcpgw_host* host;
} state;

static char* give(const mcpgw_host* h, const char* text) { return h->alloc_string(text, strlen(text)); }

static char* text_result(const mcpgw_host* h, const char* text) {
  char buf[512];
  snprintf(buf, sizeof buf, "{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}", text);
  return give(h, buf);
}

/* The string value of "key" in flat JSON text (the tests' own), into out. */
static int string_arg(const char* json, const char* key, char* out, size_t size) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
  const char* at = strstr(json, pattern);
  if (!at) return 0;
  at += strlen(pattern);
  size_t n = 0;
  while (at[n] && at[n] != '"' && n + 1 < size) ++n;
  memcpy(out, at, n);
  out[n] = '\0';
  return 1;
}

static void* init(const mcpgw_host* host, const char* config_json, char** error) {
  char marker[1024];
  if (string_arg(config_json, "fail_init_if", marker, sizeof marker) && access(marker, F_OK) == 0) {
    *error = give(host, "refusing to start: the marker file exists");
    return NULL;
  }
  state* s = calloc(1, sizeof *s);
  s->host = host;
  return s;
}

#define TOOL(n) "{\"name\":\"" n "\",\"inputSchema\":{\"type\":\"object\"}}"

static char* list_tools(void* st) {
  const state* s = st;
  return give(s->host, "[" TOOL("ok") "," TOOL("version") "," TOOL("crash") "," TOOL("abort") "," TOOL("exit") ","
                       TOOL("kill") "," TOOL("spin") "," TOOL("hog") "," TOOL("noisy") "," TOOL("call_then_crash") ","
                       TOOL("gate") "," TOOL("whoami") "]");
}

static char* call(void* st, mcpgw_call* c, const char* tool, const char* arguments_json) {
  const state* s = st;
  const mcpgw_host* h = s->host;
  if (strcmp(tool, "ok") == 0) return text_result(h, "fine");
  if (strcmp(tool, "version") == 0) return text_result(h, PLUGIN_TAG);
  if (strcmp(tool, "crash") == 0) {
    volatile int* nothing = NULL;
    *nothing = 1;
  }
  if (strcmp(tool, "abort") == 0) abort();
  if (strcmp(tool, "exit") == 0) exit(3);
  if (strcmp(tool, "kill") == 0) raise(SIGKILL);
  if (strcmp(tool, "spin") == 0)
    for (volatile unsigned long i = 0;; ++i) {
    }
  if (strcmp(tool, "hog") == 0) {
    /* Takes "mb" MiB unless the memory limit stops it first: then it
       writes through the NULL it got, as careless code does. It touches
       each page (a limit on memory in use counts only those) unless
       "touch" is false (an address-space limit stops the allocation
       itself: no CPU spent, however busy the machine). */
    const char* at = strstr(arguments_json, "\"mb\":");
    long mb = at ? strtol(at + 5, NULL, 10) : 0;
    int touch = strstr(arguments_json, "\"touch\":false") == NULL;
    for (long got = 0; got < mb; got += 16) {
      char* p = malloc(16 << 20);
      if (!p) {
        volatile int* nothing = NULL;
        *nothing = 1;
      }
      for (long i = 0; touch && i < (16 << 20); i += 4096) ((volatile char*)p)[i] = 1;
    }
    return text_result(h, "not limited");
  }
  if (strcmp(tool, "noisy") == 0) {
    for (int i = 0; i < 40; ++i) {
      printf("noise on stdout %d {\"jsonrpc\":\"2.0\",\"id\":999,\"result\":{}}\n", i);
      fprintf(stderr, "noise on stderr %d\n", i);
    }
    fflush(stdout);
    return text_result(h, "made noise");
  }
  if (strcmp(tool, "call_then_crash") == 0) {
    char* r = h->call_tool(c, "bank", "get_account_balance", "{\"accountId\":\"acc_checking_001\"}");
    h->free_string(r);
    volatile int* nothing = NULL;
    *nothing = 1;
  }
  if (strcmp(tool, "gate") == 0) {
    /* Holds its call until the test writes into the FIFO it makes at
       "path": open blocks until a writer comes, read until it closes. */
    char path[1024];
    if (!string_arg(arguments_json, "path", path, sizeof path)) return text_result(h, "no path");
    if (mkfifo(path, 0600) != 0) return text_result(h, "cannot make the gate");
    h->log(h, MCPGW_LOG_INFO, "gate is waiting");
    int fd = open(path, O_RDONLY);
    if (fd < 0) return text_result(h, "cannot open the gate");
    char buf[64];
    while (read(fd, buf, sizeof buf) > 0) {
    }
    close(fd);
    unlink(path);
    return text_result(h, "opened");
  }
  if (strcmp(tool, "whoami") == 0) {
    char buf[256];
    snprintf(buf, sizeof buf, "principal=%s mode=%s", h->principal(c), h->mode(c));
    h->log(h, MCPGW_LOG_INFO, "whoami was asked");
    return text_result(h, buf);
  }
  return NULL;
}

static void shutdown_plugin(void* st) { free(st); }

static const mcpgw_plugin descriptor = {
    sizeof(mcpgw_plugin), MCPGW_PLUGIN_ABI_VERSION, PLUGIN_NAME, PLUGIN_TAG, init, list_tools, call, shutdown_plugin};

MCPGW_PLUGIN_EXPORT const mcpgw_plugin* mcpgw_plugin_v1(void) { return &descriptor; }
