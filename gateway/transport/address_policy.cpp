#include "transport/address_policy.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include "util/ascii.hpp"

namespace mcpgw::transport {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = ascii_lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/// One part of an inet_aton address at the front of `s` (consumed): C's
/// notation as strtoul(base 0) reads it. nullopt: no number, or above 2^32-1.
std::optional<std::uint64_t> aton_part(std::string_view& s) {
  if (s.empty() || !is_digit(s.front())) return std::nullopt;
  unsigned base = 10;
  std::size_t i = 0;
  if (s.front() == '0') {
    base = 8;
    if (s.size() > 1 && (s[1] == 'x' || s[1] == 'X') && s.size() > 2 && hex_value(s[2]) >= 0) {
      base = 16;
      i = 2;
    }
  }
  std::uint64_t v = 0;
  for (; i < s.size(); ++i) {
    int d = base == 16 ? hex_value(s[i]) : is_digit(s[i]) ? s[i] - '0' : -1;
    if (d < 0 || static_cast<unsigned>(d) >= base) break;
    v = v * base + static_cast<unsigned>(d);
    if (v > 0xffffffffu) return std::nullopt;
  }
  s.remove_prefix(i);
  return v;
}

/// inet_aton's forms: a, a.b (b: 24 bits), a.b.c (c: 16 bits), a.b.c.d.
std::optional<IpAddress> parse_aton(std::string_view s) {
  // (On the stack: every request's Host is read by this.)
  std::array<std::uint64_t, 4> parts{};
  std::size_t n = 0;
  for (;;) {
    auto part = aton_part(s);
    if (!part) return std::nullopt;
    parts[n++] = *part;
    if (s.empty()) break;
    if (s.front() != '.' || n == 4 || *part > 0xff) return std::nullopt;
    s.remove_prefix(1);
  }
  static constexpr std::array<std::uint64_t, 4> kLast{0xffffffffu, 0xffffffu, 0xffffu, 0xffu};
  if (parts[n - 1] > kLast[n - 1]) return std::nullopt;
  std::uint32_t v = static_cast<std::uint32_t>(parts[n - 1]);
  for (std::size_t i = 0; i + 1 < n; ++i) v |= static_cast<std::uint32_t>(parts[i] << (24 - 8 * i));
  return IpAddress::v4(v);
}

/// The dotted quad an IPv6 literal may end with: four decimal parts, as
/// inet_pton reads them (no leading zeros: no octal here).
std::optional<std::uint32_t> parse_quad(std::string_view s) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    std::size_t n = 0;
    unsigned part = 0;
    while (n < s.size() && n < 3 && is_digit(s[n])) part = part * 10 + static_cast<unsigned>(s[n++] - '0');
    if (n == 0 || part > 255 || (n > 1 && s[0] == '0')) return std::nullopt;
    s.remove_prefix(n);
    v = v << 8 | part;
    if (i < 3) {
      if (s.empty() || s.front() != '.') return std::nullopt;
      s.remove_prefix(1);
    }
  }
  if (!s.empty()) return std::nullopt;
  return v;
}

std::optional<IpAddress> parse_v6(std::string_view s) {
  std::array<std::uint16_t, 8> words{};
  std::size_t n = 0;
  std::optional<std::size_t> gap;
  if (s.substr(0, 2) == "::") {
    gap = 0;
    s.remove_prefix(2);
  }
  while (!s.empty()) {
    std::size_t end = s.find(':');
    std::string_view group = s.substr(0, end);
    if (group.find('.') != std::string_view::npos) {
      auto quad = end == std::string_view::npos ? parse_quad(group) : std::nullopt;
      if (!quad || n > 6) return std::nullopt;
      words[n++] = static_cast<std::uint16_t>(*quad >> 16);
      words[n++] = static_cast<std::uint16_t>(*quad & 0xffff);
      break;
    }
    if (group.empty() || group.size() > 4 || n == 8) return std::nullopt;
    unsigned w = 0;
    for (char c : group) {
      int d = hex_value(c);
      if (d < 0) return std::nullopt;
      w = w << 4 | static_cast<unsigned>(d);
    }
    words[n++] = static_cast<std::uint16_t>(w);
    if (end == std::string_view::npos) break;
    s.remove_prefix(end + 1);
    if (!s.empty() && s.front() == ':') {
      if (gap) return std::nullopt;
      gap = n;
      s.remove_prefix(1);
    } else if (s.empty()) {
      return std::nullopt;  // a trailing single colon
    }
  }
  if (gap ? n > 7 : n != 8) return std::nullopt;
  if (gap) {
    std::size_t moved = n - *gap;
    std::copy_backward(words.begin() + static_cast<std::ptrdiff_t>(*gap), words.begin() + static_cast<std::ptrdiff_t>(n),
                       words.end());
    std::fill(words.begin() + static_cast<std::ptrdiff_t>(*gap), words.end() - static_cast<std::ptrdiff_t>(moved), 0);
  }
  IpAddress a;
  a.v6 = true;
  for (std::size_t i = 0; i < 8; ++i) {
    a.bytes[2 * i] = static_cast<std::uint8_t>(words[i] >> 8);
    a.bytes[2 * i + 1] = static_cast<std::uint8_t>(words[i] & 0xff);
  }
  return a;
}

std::uint32_t be32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

bool in(std::uint32_t v, std::uint32_t net, int bits) {
  std::uint32_t mask = bits == 0 ? 0 : ~std::uint32_t{0} << (32 - bits);
  return (v & mask) == net;
}

/// Whether the first `bits` bits of `a` are those of `prefix`.
/// (Bytes past those given are zeros.)
bool in6(const IpAddress& a, std::initializer_list<std::uint8_t> prefix, int bits) {
  for (std::size_t i = 0; bits > 0; ++i, bits -= 8) {
    auto mask = static_cast<std::uint8_t>(bits >= 8 ? 0xff : 0xff << (8 - bits));
    std::uint8_t want = i < prefix.size() ? prefix.begin()[i] : 0;
    if ((a.bytes[i] & mask) != (want & mask)) return false;
  }
  return true;
}

AddressRule classify_v4(std::uint32_t v) {
  if (v == 0) return AddressRule::Unspecified;
  if (v == 0xffffffffu) return AddressRule::Broadcast;
  // Before their ranges: AWS, GCP, Azure, Oracle (169.254.169.254), AWS ECS
  // task credentials (169.254.170.2), Alibaba Cloud (100.100.100.200).
  if (v == 0xa9fea9feu || v == 0xa9feaa02u || v == 0x646464c8u) return AddressRule::CloudMetadata;
  if (in(v, 0x00000000u, 8)) return AddressRule::ThisNetwork;
  if (in(v, 0x0a000000u, 8) || in(v, 0xac100000u, 12) || in(v, 0xc0a80000u, 16)) return AddressRule::Private;
  if (in(v, 0x64400000u, 10)) return AddressRule::Shared;
  if (in(v, 0x7f000000u, 8)) return AddressRule::Loopback;
  if (in(v, 0xa9fe0000u, 16)) return AddressRule::LinkLocal;
  if (in(v, 0xe0000000u, 4)) return AddressRule::Multicast;
  // IETF protocol assignments, documentation (three), 6to4 relay anycast,
  // benchmarking, future use.
  if (in(v, 0xc0000000u, 24) || in(v, 0xc0000200u, 24) || in(v, 0xc6336400u, 24) || in(v, 0xcb007100u, 24) ||
      in(v, 0xc0586300u, 24) || in(v, 0xc6120000u, 15) || in(v, 0xf0000000u, 4))
    return AddressRule::Reserved;
  return AddressRule::None;
}

/// An IPv6 form whose traffic goes to the IPv4 address it carries; an
/// obsolete form carrying a global address goes nowhere useful: reserved.
AddressRule carried(std::uint32_t v4, bool obsolete) {
  AddressRule r = classify_v4(v4);
  return r == AddressRule::None && obsolete ? AddressRule::Reserved : r;
}

AddressRule classify_v6(const IpAddress& a) {
  const std::uint8_t* b = a.bytes.data();
  bool first80_zero = std::all_of(b, b + 10, [](std::uint8_t x) { return x == 0; });
  if (first80_zero && b[10] == 0 && b[11] == 0) {
    std::uint32_t low = be32(b + 12);
    if (low == 0) return AddressRule::Unspecified;
    if (low == 1) return AddressRule::Loopback;
    return carried(low, true);  // IPv4-compatible (deprecated)
  }
  if (first80_zero && b[10] == 0xff && b[11] == 0xff) return carried(be32(b + 12), false);  // IPv4-mapped
  // IPv4-translated (SIIT, ::ffff:0:a.b.c.d).
  if (std::all_of(b, b + 8, [](std::uint8_t x) { return x == 0; }) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 &&
      b[11] == 0)
    return carried(be32(b + 12), true);
  if (in6(a, {0x00, 0x64, 0xff, 0x9b}, 96)) return carried(be32(b + 12), false);  // NAT64
  if (in6(a, {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48)) return AddressRule::Private;  // local-use NAT64
  if (in6(a, {0x20, 0x02}, 16)) return carried(be32(b + 2), false);                     // 6to4
  // fd00:ec2::254, AWS's metadata service over IPv6 (inside fc00::/7).
  if (a == IpAddress{true, {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54}})
    return AddressRule::CloudMetadata;
  if (in6(a, {0xfc}, 7) || in6(a, {0xfe, 0xc0}, 10)) return AddressRule::Private;
  if (in6(a, {0xfe, 0x80}, 10)) return AddressRule::LinkLocal;
  if (in6(a, {0xff}, 8)) return AddressRule::Multicast;
  // Discard-only, IETF assignments (Teredo among them), documentation
  // (two), SRv6 segment ids; and all outside 2000::/3, not allocated.
  if (in6(a, {0x01, 0x00}, 64) || in6(a, {0x20, 0x01, 0x00, 0x00}, 23) || in6(a, {0x20, 0x01, 0x0d, 0xb8}, 32) ||
      in6(a, {0x3f, 0xff}, 20) || in6(a, {0x5f, 0x00}, 16) || !in6(a, {0x20}, 3))
    return AddressRule::Reserved;
  return AddressRule::None;
}

/// `host` in lower case, without one trailing dot (a fully qualified name).
std::string normalized_name(std::string_view host) {
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  return ascii_lowered(std::string(host));
}

bool allowed(const AddressPolicy& p, AddressRule r) {
  return r == AddressRule::None || (r == AddressRule::Loopback && p.allow_loopback);
}

std::string because(AddressRule r) {
  std::string s = std::string(rule_text(r)) + " (rule " + std::string(rule_name(r)) + ")";
  if (r == AddressRule::Loopback) s += ", allowed only for an upstream on loopback";
  return s;
}

}  // namespace

IpAddress IpAddress::v4(std::uint32_t value) {
  IpAddress a;
  a.bytes[0] = static_cast<std::uint8_t>(value >> 24);
  a.bytes[1] = static_cast<std::uint8_t>(value >> 16);
  a.bytes[2] = static_cast<std::uint8_t>(value >> 8);
  a.bytes[3] = static_cast<std::uint8_t>(value);
  return a;
}

std::uint32_t IpAddress::v4_value() const { return v6 ? 0 : be32(bytes.data()); }

std::string IpAddress::text() const {
  char buf[64];
  if (!v6) {
    std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", bytes[0], bytes[1], bytes[2], bytes[3]);
    return buf;
  }
  std::array<unsigned, 8> w{};
  for (std::size_t i = 0; i < 8; ++i) w[i] = static_cast<unsigned>(bytes[2 * i] << 8 | bytes[2 * i + 1]);
  // RFC 5952 §5: an IPv4-mapped address ends in dotted decimal.
  bool mapped = std::all_of(w.begin(), w.begin() + 5, [](unsigned x) { return x == 0; }) && w[5] == 0xffff;
  std::size_t groups = mapped ? 6 : 8;
  // §4.2: the longest run of two or more zero groups, the first of equals.
  std::size_t best = groups, best_len = 1;
  for (std::size_t i = 0; i < groups;) {
    std::size_t j = i;
    while (j < groups && w[j] == 0) ++j;
    if (j - i > best_len) {
      best = i;
      best_len = j - i;
    }
    i = j == i ? i + 1 : j;
  }
  std::string out;
  for (std::size_t i = 0; i < groups; ++i) {
    if (i == best) {
      out += "::";
      i += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ':';
    std::snprintf(buf, sizeof buf, "%x", w[i]);
    out += buf;
  }
  if (mapped) {
    if (out.back() != ':') out += ':';
    out += IpAddress::v4(be32(bytes.data() + 12)).text();
  }
  return out;
}

std::optional<IpAddress> parse_ip(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) return std::nullopt;
  if (host.find(':') == std::string_view::npos) return parse_aton(host);
  // A zone id names an interface, not another address; in a URL its "%" is
  // written "%25".
  if (auto pct = host.find('%'); pct != std::string_view::npos) {
    if (pct + 1 >= host.size()) return std::nullopt;
    host = host.substr(0, pct);
  }
  return parse_v6(host);
}

std::string_view rule_name(AddressRule rule) {
  switch (rule) {
    case AddressRule::None: return "none";
    case AddressRule::Loopback: return "loopback";
    case AddressRule::Private: return "private";
    case AddressRule::LinkLocal: return "link-local";
    case AddressRule::CloudMetadata: return "cloud-metadata";
    case AddressRule::Unspecified: return "unspecified";
    case AddressRule::ThisNetwork: return "this-network";
    case AddressRule::Shared: return "shared";
    case AddressRule::Multicast: return "multicast";
    case AddressRule::Broadcast: return "broadcast";
    case AddressRule::Reserved: return "reserved";
  }
  return "?";
}

std::string_view rule_text(AddressRule rule) {
  switch (rule) {
    case AddressRule::None: return "a global unicast address";
    case AddressRule::Loopback: return "a loopback address (127.0.0.0/8, ::1)";
    case AddressRule::Private:
      return "a private address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7, fec0::/10, 64:ff9b:1::/48)";
    case AddressRule::LinkLocal: return "a link-local address (169.254.0.0/16, fe80::/10)";
    case AddressRule::CloudMetadata:
      return "a cloud metadata service (169.254.169.254, 169.254.170.2, 100.100.100.200, fd00:ec2::254)";
    case AddressRule::Unspecified: return "the unspecified address (0.0.0.0, ::)";
    case AddressRule::ThisNetwork: return "an address of this network (0.0.0.0/8)";
    case AddressRule::Shared: return "a shared carrier-grade NAT address (100.64.0.0/10)";
    case AddressRule::Multicast: return "a multicast address (224.0.0.0/4, ff00::/8)";
    case AddressRule::Broadcast: return "the broadcast address (255.255.255.255)";
    case AddressRule::Reserved:
      return "a reserved address (documentation, benchmarking, IETF protocol assignments, 240.0.0.0/4, IPv6 outside "
             "2000::/3, Teredo)";
  }
  return "?";
}

AddressRule classify(const IpAddress& a) { return a.v6 ? classify_v6(a) : classify_v4(a.v4_value()); }

AddressRule classify_host(std::string_view host) {
  if (auto ip = parse_ip(host)) return classify(*ip);
  // Names that resolve to the metadata services inside their clouds,
  // refused before any lookup.
  static constexpr std::array<std::string_view, 6> kMetadata{
      "metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal",
      "metadata.azure.internal"};
  std::string name = normalized_name(host);
  if (std::find(kMetadata.begin(), kMetadata.end(), name) != kMetadata.end()) return AddressRule::CloudMetadata;
  return AddressRule::None;
}

bool is_loopback_host(std::string_view host) {
  // Also what the listener's Host and Origin checks pass: an authority,
  // perhaps with a port ("[::1]:80", "localhost:8080").
  if (!host.empty() && host.front() == '[') {
    host = host.substr(1, host.find(']') == std::string_view::npos ? host.npos : host.find(']') - 1);
  } else if (auto colon = host.rfind(':'); colon != std::string_view::npos && host.find(':') == colon) {
    host = host.substr(0, colon);
  }
  if (auto ip = parse_ip(host)) return classify(*ip) == AddressRule::Loopback;
  return normalized_name(host) == "localhost";
}

std::optional<Refusal> check_host(const AddressPolicy& policy, std::string_view host) {
  auto ip = parse_ip(host);
  AddressRule r = ip ? classify(*ip) : classify_host(host);
  if (allowed(policy, r)) return std::nullopt;
  std::string shown(host.substr(0, 200));
  if (!ip) return Refusal{r, shown + " is the name of " + because(r)};
  if (ip->text() != host) shown += " (" + ip->text() + ")";
  return Refusal{r, shown + " is " + because(r)};
}

std::optional<Refusal> check_resolved(const AddressPolicy& policy, std::string_view host, const IpAddress& address) {
  AddressRule r = classify(address);
  if (allowed(policy, r)) return std::nullopt;
  return Refusal{r, std::string(host.substr(0, 200)) + " resolves to " + address.text() + ", " + because(r)};
}

}  // namespace mcpgw::transport
