#pragma once
// UTF-8 well-formedness (Unicode 15, table 3-7): what the gateway checks
// every string it writes against, so a peer's stray bytes never reach
// another peer.
#include <string>
#include <string_view>

namespace mcpgw {

/// Whether `s` is well-formed UTF-8: no stray continuation bytes, overlong
/// forms, surrogates (CESU-8) or code points past U+10FFFF, nothing cut short.
bool valid_utf8(std::string_view s);

/// `s` with each ill-formed part replaced by U+FFFD: one per maximal
/// subpart, as the Unicode standard recommends and WHATWG decoders do, so
/// a strict decoder and the gateway agree on what the text says.
std::string repair_utf8(std::string_view s);

}  // namespace mcpgw
