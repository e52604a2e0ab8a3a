#include <doctest/doctest.h>


#include "saga/token.hpp"
#include "util/base64.hpp"

using namespace mcpgw;
using saga::Claims;
using saga::Keyring;
using saga::Refusal;

namespace {

Claims claims(std::string principal = "alice", std::string target = "tools/call deploy") {
  Claims c;
  c.kind = "mrtr";
  c.principal = std::move(principal);
  c.target = std::move(target);
  auto args = json::parse(R"({"service":"api"})");
  c.args_digest = saga::digest(&*args);
  c.state.AddMember("round", 2, c.state.GetAllocator());
  return c;
}

Refusal::Why refused(const std::variant<Claims, Refusal>& r) {
  REQUIRE(std::holds_alternative<Refusal>(r));
  return std::get<Refusal>(r).why;
}

}  // namespace

TEST_CASE("saga: base64url round-trips every byte value and refuses other alphabets") {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (std::size_t n = 0; n < all.size(); n += 37) {
    std::string part = all.substr(0, n);
    CHECK(unbase64url(base64url(part)) == part);
  }
  CHECK(base64url("hi?") == "aGk_");
  CHECK(!unbase64url("aGk/"));
  CHECK(!unbase64url("aGk="));
  CHECK(!unbase64url("a"));
  CHECK(!unbase64url("aGl"));  // non-zero leftover bits: not canonical
}

TEST_CASE("saga: a sealed token opens with its claims and state") {
  Keyring k({"secret-1"}, std::chrono::seconds(60));
  auto token = k.seal(claims());
  REQUIRE(token);
  auto opened = k.open(*token, claims());
  REQUIRE(std::holds_alternative<Claims>(opened));
  const Claims& c = std::get<Claims>(opened);
  CHECK(c.state["round"].GetInt() == 2);
  CHECK(c.id.size() == 24);
  CHECK(!k.ephemeral());
  auto again = k.seal(claims());
  REQUIRE(again);
  CHECK(*again != *token);  // a fresh id every time
}

TEST_CASE("saga: every flipped byte is refused") {
  Keyring k({"secret-1"}, std::chrono::seconds(60));
  std::string token = *k.seal(claims());
  for (std::size_t i = 0; i < token.size(); ++i) {
    std::string t = token;
    t[i] = t[i] == 'A' ? 'B' : 'A';
    CHECK(std::holds_alternative<Refusal>(k.open(t, claims())));
  }
  CHECK(refused(k.open(token + "-TAMPERED", claims())) == Refusal::Why::Signature);
  CHECK(refused(k.open("", claims())) == Refusal::Why::Malformed);
  CHECK(refused(k.open("mcpgw1.", claims())) == Refusal::Why::Malformed);
  CHECK(refused(k.open(std::string(saga::kMaxTokenBytes + 1, 'a'), claims())) == Refusal::Why::TooLarge);
}

TEST_CASE("saga: keys rotate; other secrets, principals, targets and arguments are refused") {
  Keyring old_only({"old"}, std::chrono::seconds(60));
  Keyring rotated({"new", "old"}, std::chrono::seconds(60));
  Keyring other({"other"}, std::chrono::seconds(60));
  std::string by_old = *old_only.seal(claims());
  CHECK(std::holds_alternative<Claims>(rotated.open(by_old, claims())));
  std::string by_new = *rotated.seal(claims());
  CHECK(refused(old_only.open(by_new, claims())) == Refusal::Why::Signature);
  CHECK(refused(other.open(by_old, claims())) == Refusal::Why::Signature);
  CHECK(refused(rotated.open(by_old, claims("bob"))) == Refusal::Why::WrongPrincipal);
  CHECK(refused(rotated.open(by_old, claims("alice", "tools/call other"))) == Refusal::Why::WrongTarget);
  Claims other_args = claims();
  other_args.args_digest = saga::digest(nullptr);
  CHECK(refused(rotated.open(by_old, other_args)) == Refusal::Why::WrongArguments);
  Claims saga_kind = claims();
  saga_kind.kind = "saga";
  CHECK(refused(rotated.open(by_old, saga_kind)) == Refusal::Why::WrongKind);
}

TEST_CASE("saga: expired tokens are refused; no secret means a per-process key") {
  Keyring k({"s"}, std::chrono::seconds(-1));
  CHECK(refused(k.open(*k.seal(claims()), claims())) == Refusal::Why::Expired);
  Keyring a({}, std::chrono::seconds(60)), b({}, std::chrono::seconds(60));
  CHECK(a.ephemeral());
  CHECK(refused(b.open(*a.seal(claims()), claims())) == Refusal::Why::Signature);
}

TEST_CASE("saga: state too large for a token is an error, not a token") {
  Keyring k({"s"}, std::chrono::seconds(60));
  Claims c = claims();
  c.state.AddMember("blob", json::str(std::string(saga::kMaxTokenBytes, 'x'), c.state.GetAllocator()),
                    c.state.GetAllocator());
  CHECK(!k.seal(std::move(c)));
}

TEST_CASE("saga: claims read from a peer's ill-formed text survive seal -> open (found by fuzz_token)") {
  // Text the gateway read holds no ill-formed UTF-8 (repaired as read, a
  // lone surrogate escape refused), so what it seals opens the same.
  auto sent = json::parse("{\"t\":\"tools/call bank:\xFF\xC3(\",\"p\":\"al\xEDice\"}");
  REQUIRE(sent);
  CHECK(!json::parse(R"({"t":"tools/call bank:\ude00"})"));
  Claims c = claims((*sent)["p"].GetString(), (*sent)["t"].GetString());
  Keyring k({"secret-1"}, std::chrono::seconds(60));
  auto token = k.seal(claims(c.principal, c.target));
  REQUIRE(token);
  auto opened = k.open(*token, c);
  REQUIRE(std::holds_alternative<Claims>(opened));
  CHECK(std::get<Claims>(opened).target == c.target);
  CHECK(std::get<Claims>(opened).principal == c.principal);
}
