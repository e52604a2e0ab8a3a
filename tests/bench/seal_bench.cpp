// scripts/bench's cluster section: what sealing and opening a session id
// costs (cluster.secret), with a session as the official SDK clients begin
// it. Prints "RESULT seal_ns=N open_ns=N id_bytes=N": CPU time of this
// thread per id, so that other processes on a shared machine do not count.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cluster/sealer.hpp"

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::stoi(argv[1]) : 200000;
  mcpgw::cluster::Sealer sealer({"bench-secret-new", "bench-secret-old"}, 86400);
  mcpgw::transport::SealedSession s;
  s.principal = "ci";
  s.mode = "";
  s.protocol_version = "2025-11-25";
  s.capabilities = R"({"elicitation":{"form":{}},"sampling":{},"roots":{"listChanged":true}})";
  s.client_info = R"({"name":"claude-code","version":"2.0.14"})";
  s.created = mcpgw::cluster::unix_now();
  struct Clock {
    using duration = std::chrono::nanoseconds;
    static duration now() {
      timespec ts{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
      return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
    }
  };
  std::vector<std::string> ids;
  ids.reserve(static_cast<std::size_t>(n));
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) ids.push_back(*sealer.seal(s));
  auto t1 = Clock::now();
  std::size_t opened = 0;
  for (const auto& id : ids) opened += sealer.open(id, s.created).has_value();
  auto t2 = Clock::now();
  if (opened != ids.size()) {
    std::fprintf(stderr, "seal_bench: %zu of %zu ids did not open\n", ids.size() - opened, ids.size());
    return 1;
  }
  auto ns = [n](Clock::duration d) { return d.count() / n; };
  std::printf("RESULT seal_ns=%lld open_ns=%lld id_bytes=%zu\n", static_cast<long long>(ns(t1 - t0)),
              static_cast<long long>(ns(t2 - t1)), ids.front().size());
  return 0;
}
