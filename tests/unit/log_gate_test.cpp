#include "upstream/log_gate.hpp"

#include <doctest/doctest.h>

using mcpgw::upstream::LogGate;
using namespace std::chrono_literals;

TEST_CASE("log gate: a burst passes, then kRate a second; what is held back is counted once") {
  LogGate g;
  auto t = LogGate::Clock::now();
  int passed = 0;
  for (int i = 0; i < 1000; ++i) passed += g.admit(t);
  CHECK(passed == static_cast<int>(LogGate::kBurst));
  CHECK(g.take_suppressed() == 1000 - LogGate::kBurst);
  CHECK(g.take_suppressed() == 0);
  // One second later, a second's worth passes again.
  passed = 0;
  for (int i = 0; i < 100; ++i) passed += g.admit(t + 1s);
  CHECK(passed == static_cast<int>(LogGate::kRate));
  CHECK(g.take_suppressed() == 100 - LogGate::kRate);
}

TEST_CASE("log gate: a quiet spell refills the burst, never beyond it") {
  LogGate g;
  auto t = LogGate::Clock::now();
  for (int i = 0; i < 200; ++i) g.admit(t);
  g.take_suppressed();
  int passed = 0;
  for (int i = 0; i < 1000; ++i) passed += g.admit(t + 1h);
  CHECK(passed == static_cast<int>(LogGate::kBurst));
}

TEST_CASE("log gate: a clock that goes backwards takes nothing away") {
  LogGate g;
  auto t = LogGate::Clock::now();
  CHECK(g.admit(t));
  CHECK(g.admit(t - 1s));
  CHECK(g.take_suppressed() == 0);
}
