#pragma once
// Whether memory_mb can be an address-space limit (RLIMIT_AS) in this
// build: the gateway, which reports how memory_mb is enforced, and the host,
// which sets the limit, must agree, and they are always built together.
namespace mcpgw::plugin_host {

/// False in a sanitizer build: it reserves terabytes of shadow address
/// space at start, so any address-space limit would fail every allocation.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kAddressLimitWorks = false;
#else
inline constexpr bool kAddressLimitWorks = true;
#endif

}  // namespace mcpgw::plugin_host
