/* A plugin built for an ABI version this gateway does not speak. */
#include <mcpgw/plugin.h>

static const mcpgw_plugin descriptor = {sizeof(mcpgw_plugin), 99, "from_the_future", "9.0.0", 0, 0, 0, 0};

MCPGW_PLUGIN_EXPORT const mcpgw_plugin* mcpgw_plugin_v1(void) { return &descriptor; }
