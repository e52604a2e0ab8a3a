#include "cluster/sealer.hpp"

#include <doctest/doctest.h>

#include <set>

#include "cluster/task_ids.hpp"
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

namespace {

mcpgw::cluster::TaskRef sample_task() {
  mcpgw::cluster::TaskRef r;
  r.kind = mcpgw::cluster::TaskRef::Kind::Upstream;
  r.principal = "alice";
  r.server = "everything";
  r.upstream_id = "786512e2-9e0d-44bd-8f29-789f320fe840";
  r.upstream_session = "1a2b3c";
  r.created_ms = 1'764'000'000'000;
  r.expires_ms = 1'764'000'300'000;
  return r;
}

}  // namespace

TEST_CASE("task ids: the same task gets the same id, which opens to it on any holder of the secret") {
  mcpgw::cluster::TaskIds a({"secret"}), b({"other", "secret"});
  auto r = sample_task();
  auto id = a.seal(r);
  REQUIRE(id.ok());
  CHECK(id->rfind("mt1", 0) == 0);
  CHECK(*a.seal(r) == *id);
  CHECK(a.open(*id) == r);
  // A replica that rotated the secret in still opens the old ids.
  CHECK(b.open(*id) == r);
  r.principal = "bob";
  CHECK(*a.seal(r) != *id);
}

TEST_CASE("task ids: forged, altered, foreign and session ids do not open") {
  mcpgw::cluster::TaskIds ids({"secret"});
  auto id = *ids.seal(sample_task());
  for (std::size_t i = 3; i < id.size(); ++i) {
    std::string t = id;
    t[i] = t[i] == 'A' ? 'B' : 'A';
    CHECK_FALSE(ids.open(t));
  }
  CHECK_FALSE(mcpgw::cluster::TaskIds({"another"}).open(id));
  CHECK_FALSE(ids.open(""));
  CHECK_FALSE(ids.open("mt1"));
  CHECK_FALSE(ids.open("786512e2-9e0d-44bd-8f29-789f320fe840"));
  CHECK_FALSE(ids.open(std::string(5000, 'A')));
  // A session id sealed with the same secret is not a task id, and the
  // reverse: each use has keys and associated data of its own.
  Sealer sealer({"secret"}, 3600);
  auto session = *sealer.seal(sample(1000));
  CHECK_FALSE(ids.open("mt1" + session.substr(2)));
  CHECK_FALSE(sealer.open("m1" + id.substr(3), 1000));
  // Without a secret the key is the process's own.
  mcpgw::cluster::TaskIds random1({}), random2({});
  CHECK_FALSE(random2.open(*random1.seal(sample_task())));
  CHECK(random1.open(*random1.seal(sample_task())) == sample_task());
}
