#pragma once
// Which addresses a URL that someone else chose may make the gateway
// connect to: the guard against server-side request forgery of the
// gateway's OAuth client, whose discovery follows URLs an upstream names.
// It reads every way an address can be written (inet_aton's octal, hex,
// decimal and short IPv4 forms; IPv6 with an embedded IPv4 address, mapped
// or compatible, with a zone id) and knows the special-purpose ranges and
// the cloud metadata names. Pure: no resolver, no socket; the HTTP client
// applies it to a host before resolving it and to every address resolved.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mcpgw::transport {

/// An IPv4 or IPv6 address, in network byte order.
struct IpAddress {
  bool v6 = false;
  std::array<std::uint8_t, 16> bytes{};  ///< IPv4: the first four

  /// The IPv4 address `value` (host byte order).
  static IpAddress v4(std::uint32_t value);
  /// An IPv4 address's value in host byte order (0 for IPv6).
  std::uint32_t v4_value() const;
  /// Dotted decimal, or IPv6 as RFC 5952 writes it ("::ffff:127.0.0.1").
  std::string text() const;
  friend bool operator==(const IpAddress&, const IpAddress&) = default;
};

/// `host` as an address literal, read the way the system's resolver reads
/// it: IPv4 in any of inet_aton's forms (one to four parts, each decimal,
/// octal with a leading 0 or hex with 0x: "127.1", "0177.0.0.1",
/// "2130706433", "0x7f.1"), IPv6 in any of RFC 4291's (brackets and a zone
/// id, "%eth0" or "%25eth0", allowed). nullopt: a name, not a literal.
std::optional<IpAddress> parse_ip(std::string_view host);

/// The special-purpose range an address is in, which is why it is refused.
/// Named in refusals (rule_name) and documented in docs/operations.md.
enum class AddressRule {
  None,           ///< global unicast: allowed
  Loopback,       ///< 127.0.0.0/8, ::1
  Private,        ///< 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10, 64:ff9b:1::/48
  LinkLocal,      ///< 169.254/16, fe80::/10
  CloudMetadata,  ///< 169.254.169.254, 169.254.170.2, 100.100.100.200, fd00:ec2::254, metadata names
  Unspecified,    ///< 0.0.0.0, ::
  ThisNetwork,    ///< 0.0.0.0/8 (Linux connects 0.x to the host itself)
  Shared,         ///< 100.64.0.0/10, carrier-grade NAT
  Multicast,      ///< 224.0.0.0/4, ff00::/8
  Broadcast,      ///< 255.255.255.255
  Reserved,       ///< documentation, benchmarking, IETF assignments, 240/4, unallocated IPv6, Teredo
};

/// The rule's name as refusals give it: "private", "cloud-metadata", ...
std::string_view rule_name(AddressRule rule);
/// What the rule covers: "a private address (10.0.0.0/8, ...)".
std::string_view rule_text(AddressRule rule);

/// The range `a` is in. An IPv6 address that carries an IPv4 one (mapped
/// ::ffff:0:0/96, compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16) is
/// in that address's range: it reaches that address.
AddressRule classify(const IpAddress& a);

/// A URL's host before resolving it: a literal's range, CloudMetadata for
/// the cloud metadata services' names (metadata.google.internal, ...), None
/// for any other name (decided by what it resolves to).
AddressRule classify_host(std::string_view host);

/// Whether `host` is the loopback interface as written: a loopback literal
/// in any form, or "localhost".
bool is_loopback_host(std::string_view host);

/// What a guarded client may reach: global unicast addresses, and loopback
/// when `allow_loopback`.
struct AddressPolicy {
  bool allow_loopback = false;
  friend bool operator==(const AddressPolicy&, const AddressPolicy&) = default;
};

/// Why a host or address is refused.
struct Refusal {
  AddressRule rule = AddressRule::None;
  /// Names the host (and the address it is or resolved to) and the rule:
  /// "0251.0376.0251.0376 (169.254.169.254) is a cloud metadata address ... (rule cloud-metadata)".
  std::string message;
};

/// nullopt when `policy` lets `host` be resolved; else why not.
std::optional<Refusal> check_host(const AddressPolicy& policy, std::string_view host);
/// nullopt when `policy` lets the gateway connect to `address`, which
/// `host` resolved to; else why not.
std::optional<Refusal> check_resolved(const AddressPolicy& policy, std::string_view host, const IpAddress& address);

}  // namespace mcpgw::transport
