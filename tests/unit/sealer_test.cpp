#include "cluster/sealer.hpp"

#include <doctest/doctest.h>

#include <set>

#include "util/base64.hpp"

using mcpgw::cluster::Sealer;
using mcpgw::transport::SealedSession;

namespace {

SealedSession sample(std::int64_t created) {
  SealedSession s;
  s.principal = "alice";
  s.mode = "readonly";
  s.protocol_version = "2025-11-25";
  s.capabilities = R"({"elicitation":{},"sampling":{}})";
  s.client_info = R"({"name":"test-client","version":"1.0"})";
  s.created = created;
  return s;
}

}  // namespace

TEST_CASE("sealer: an id opens to the session it seals, with a fresh nonce each time") {
  Sealer sealer({"secret"}, 3600);
  auto s = sample(1000);
  auto a = sealer.seal(s);
  auto b = sealer.seal(s);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a != *b);
  CHECK(a->rfind("m1", 0) == 0);
  for (char c : *a) CHECK((std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'));
  auto opened = sealer.open(*a, 1000);
  REQUIRE(opened);
  CHECK(*opened == s);
  CHECK(sealer.open(*b, 1100) == s);
}

TEST_CASE("sealer: forged, tampered, foreign and expired ids do not open") {
  Sealer sealer({"secret"}, 3600);
  auto id = *sealer.seal(sample(1000));
  // Every single-character change of the id fails authentication.
  for (std::size_t i = 2; i < id.size(); ++i) {
    std::string t = id;
    t[i] = t[i] == 'A' ? 'B' : 'A';
    CHECK_FALSE(sealer.open(t, 1000));
  }
  CHECK_FALSE(sealer.open(id.substr(0, id.size() - 1), 1000));
  CHECK_FALSE(sealer.open(id + "A", 1000));
  CHECK_FALSE(sealer.open("", 1000));
  CHECK_FALSE(sealer.open("m1", 1000));
  CHECK_FALSE(sealer.open("0123456789abcdef0123456789abcdef", 1000));
  CHECK_FALSE(sealer.open("m1" + mcpgw::base64url(std::string(40, '\0')), 1000));
  CHECK_FALSE(sealer.open(std::string(100000, 'A'), 1000));
  Sealer other({"another secret"}, 3600);
  CHECK_FALSE(other.open(id, 1000));
  CHECK_FALSE(sealer.open(id, 1000 + 3601));  // expired
  CHECK_FALSE(sealer.open(id, 1000 - 3600));  // from the future
}

TEST_CASE("sealer: the first secret seals, every one opens (rotation)") {
  Sealer old_only({"old"}, 3600);
  Sealer rotated({"new", "old"}, 3600);
  auto old_id = *old_only.seal(sample(5));
  auto new_id = *rotated.seal(sample(5));
  CHECK(rotated.open(old_id, 5));
  CHECK(rotated.open(new_id, 5));
  CHECK_FALSE(old_only.open(new_id, 5));
}

TEST_CASE("sealer: a session too large for a header is refused with the sizes") {
  Sealer sealer({"secret"}, 3600);
  auto s = sample(1);
  s.capabilities = R"({"x":")" + std::string(4000, 'y') + R"("})";
  auto r = sealer.seal(s);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().find("a session id holds at most 3072") != std::string::npos);
}

TEST_CASE("sealer: session digests are short, stable and distinct") {
  auto a = mcpgw::cluster::digest_of("id-1");
  CHECK(a.size() == 32);
  CHECK(a == mcpgw::cluster::digest_of("id-1"));
  CHECK(a != mcpgw::cluster::digest_of("id-2"));
}
