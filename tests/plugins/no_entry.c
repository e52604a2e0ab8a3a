/* A shared library that is not a plugin: it lacks mcpgw_plugin_v1. */
#include <mcpgw/plugin.h>

MCPGW_PLUGIN_EXPORT int mcpgw_plugin_v0(void) { return 0; }
