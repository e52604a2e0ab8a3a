// The pure parts of plugin isolation: the host protocol's framing
// (plugin_host/frame.hpp) and the plugins[] keys of wave 4.
#include <doctest/doctest.h>

#include <string>

#include "config/config.hpp"
#include "plugin_host/frame.hpp"

using namespace mcpgw;
namespace ph = mcpgw::plugin_host;

TEST_CASE("plugin host frames: fields, absent fields and ids survive a round trip, fed a byte at a time") {
  std::string wire;
  ph::encode(wire, ph::Type::Call, 7, 0, {"tool", "{\"a\":1}", std::nullopt, "", std::string(70000, 'x')});
  ph::encode(wire, ph::Type::UpstreamDone, 7, 3, {"{}"});
  ph::Decoder dec;
  ph::Frame f;
  std::vector<ph::Frame> got;
  for (char c : wire) {
    dec.feed(std::string_view(&c, 1));
    for (;;) {
      auto st = dec.next(f);
      REQUIRE(st != ph::Decoder::Status::Broken);
      if (st == ph::Decoder::Status::More) break;
      got.push_back(f);
    }
  }
  REQUIRE(got.size() == 2);
  CHECK(got[0].type == ph::Type::Call);
  CHECK(got[0].id == 7);
  REQUIRE(got[0].fields.size() == 5);
  CHECK(got[0].text(0) == "tool");
  CHECK(got[0].text(1) == "{\"a\":1}");
  CHECK(got[0].c_str(2) == nullptr);
  CHECK(got[0].c_str(3) != nullptr);
  CHECK(got[0].text(4).size() == 70000);
  CHECK(got[0].c_str(9) == nullptr);
  CHECK(got[1].type == ph::Type::UpstreamDone);
  CHECK(got[1].sub == 3);
  CHECK(got[1].text(0) == "{}");
}

TEST_CASE("plugin host frames: a size out of bounds or fields overrunning their frame are broken") {
  ph::Decoder huge;
  std::string wire(4, '\xff');
  huge.feed(wire);
  ph::Frame f;
  CHECK(huge.next(f) == ph::Decoder::Status::Broken);

  std::string good;
  ph::encode(good, ph::Type::Log, 0, 0, {"1", "hello"});
  std::string bad = good;
  bad[good.size() - 9] = '\x7f';  // the last field's length, now past the frame's end
  ph::Decoder dec;
  dec.feed(bad);
  CHECK(dec.next(f) == ph::Decoder::Status::Broken);

  ph::Decoder partial;
  partial.feed(std::string_view(good).substr(0, good.size() - 1));
  CHECK(partial.next(f) == ph::Decoder::Status::More);
}

TEST_CASE("config: plugins[] isolation and limits, their defaults and their errors") {
  auto ok = config::parse(
      "plugins:\n  - path: ./a.so\n  - path: ./b.so\n    isolation: none\n    timeout_ms: 5\n    memory_mb: 0\n"
      "    max_concurrency: 2\n",
      "gw.yaml", [](const std::string&) -> std::optional<std::string> { return std::nullopt; });
  REQUIRE_MESSAGE(ok.ok(), (ok.ok() ? std::string() : ok.error()));
  const auto& a = ok.value().plugins.at(0);
  CHECK(a.isolation == config::Plugin::Isolation::Process);
  CHECK(a.timeout_ms == 60000);
  CHECK(a.memory_mb == 1024);
  CHECK(a.max_concurrency == 16);
  const auto& b = ok.value().plugins.at(1);
  CHECK(b.isolation == config::Plugin::Isolation::None);
  CHECK(b.timeout_ms == 5);
  CHECK(b.memory_mb == 0);
  CHECK(b.max_concurrency == 2);

  auto bad = config::parse("plugins:\n  - path: ./a.so\n    isolation: sandbox\n", "gw.yaml",
                           [](const std::string&) -> std::optional<std::string> { return std::nullopt; });
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("gw.yaml:3: plugins[0].isolation") == 0);
  auto zero = config::parse("plugins:\n  - path: ./a.so\n    max_concurrency: 0\n", "gw.yaml",
                            [](const std::string&) -> std::optional<std::string> { return std::nullopt; });
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.error().find("gw.yaml:3: plugins[0].max_concurrency") == 0);
}
