// libFuzzer target: the SSRF guard's reading of a URL's host
// (transport/address_policy). An input is a host as a URL may carry it.
// Besides sanitizer reports, a crash is any broken property:
// - it reads an IPv4 literal exactly when glibc's inet_aton does, as the
//   same address (the resolver takes those forms: octal, hex, short);
// - it reads an IPv6 literal exactly when inet_pton does, as the same bytes;
// - an address's text reads back as the same address;
// - an IPv4 address and its IPv4-mapped IPv6 form are in the same range;
// - a refusal has a message naming the host, and a host whose range is
//   not global unicast is never let through (loopback only when allowed).
#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_common.hpp"
#include "transport/address_policy.hpp"

using namespace mcpgw;
using namespace mcpgw::transport;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string host(reinterpret_cast<const char*>(data), size);
  auto ours = parse_ip(host);
  AddressRule rule = classify_host(host);
  for (bool loopback : {false, true}) {
    auto refused = check_host(AddressPolicy{loopback}, host);
    bool open = rule == AddressRule::None || (loopback && rule == AddressRule::Loopback);
    MCPGW_FUZZ_CHECK(open == !refused, "check_host disagrees with classify_host");
    if (refused) {
      MCPGW_FUZZ_CHECK(refused->rule == rule, "a refusal under another rule");
      MCPGW_FUZZ_CHECK(refused->message.find(host.substr(0, 200)) == 0, "a refusal that does not name the host");
    }
  }
  if (ours) {
    MCPGW_FUZZ_CHECK(classify(*ours) == rule, "a literal classified unlike its address");
    auto again = parse_ip(ours->text());
    MCPGW_FUZZ_CHECK(again && *again == *ours, "an address's text does not read back as the address");
    if (!ours->v6) {
      IpAddress mapped;
      mapped.v6 = true;
      mapped.bytes[10] = mapped.bytes[11] = 0xff;
      std::copy(ours->bytes.begin(), ours->bytes.begin() + 4, mapped.bytes.begin() + 12);
      MCPGW_FUZZ_CHECK(classify(mapped) == classify(*ours), "an IPv4-mapped address in another range than its IPv4 one");
      auto resolved = check_resolved(AddressPolicy{}, "h", *ours);
      MCPGW_FUZZ_CHECK(!resolved == (classify(*ours) == AddressRule::None), "check_resolved disagrees with classify");
    }
  }

  // The references take C strings: inputs with a NUL, brackets or a zone
  // id (which they do not read) are left to the checks above; so is
  // whitespace, after which inet_aton stops (getaddrinfo does not).
  if (host.find_first_of(std::string("[]%\0 \t\n\v\f\r", 11)) != std::string::npos) return 0;
  in_addr v4{};
  in6_addr v6{};
  if (host.find(':') == std::string::npos) {
    bool theirs = inet_aton(host.c_str(), &v4) != 0;
    MCPGW_FUZZ_CHECK(theirs == (ours && !ours->v6), "parse_ip and inet_aton disagree on an IPv4 literal");
    if (theirs) MCPGW_FUZZ_CHECK(ours->v4_value() == ntohl(v4.s_addr), "parse_ip reads another IPv4 address than inet_aton");
  } else {
    bool theirs = inet_pton(AF_INET6, host.c_str(), &v6) == 1;
    MCPGW_FUZZ_CHECK(theirs == (ours && ours->v6), "parse_ip and inet_pton disagree on an IPv6 literal");
    if (theirs)
      MCPGW_FUZZ_CHECK(std::memcmp(ours->bytes.data(), v6.s6_addr, 16) == 0, "parse_ip reads other IPv6 bytes than inet_pton");
  }
  return 0;
}
