// scripts/bench's redact section: the CPU redaction adds to a tool result of
// 1 MiB of text with every built-in detector, side by side with redaction
// off. Each round takes the result as an upstream sends it (JSON text),
// parses it, masks it (on) or not (off) and writes it, as the gateway
// does; `alone` is mask_json by itself, `text` the JSON-text path of the
// audit line over the same bytes. Two texts: log-like prose with no secret
// (what most results are) and the same with a secret every 8 KiB. CPU time
// of this thread (CLOCK_THREAD_CPUTIME_ID), so other processes on a shared
// machine do not count; the best of the rounds. Prints one RESULT line per
// text: milliseconds per result.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <variant>

#include "jsonrpc/json.hpp"
#include "redact/json.hpp"
#include "redact/redactor.hpp"

using namespace mcpgw;

namespace {

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

/// 1 MiB of log-like text (words, numbers, paths, hex ids, JSON-ish
/// fragments), the same every run; with `secrets`, one every 8 KiB.
std::string text_of(bool secrets) {
  static const char* words[] = {"request", "user",  "GET",    "/api/v2/items", "status=200", "latency_ms=", "token_count",
                                "the",     "error", "retry",  "session",       "key",        "value",       "id=",
                                "{\"a\":", "},",    "passed", "failed",        "cache",      "miss",        "hit"};
  static const char* samples[] = {"AKIAIOSFODNN7EXAMPLE", "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
                                  "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "password=hunter2-very-secret",
                                  "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
                                  "AIzaSyA1234567890abcdefghijklmnopqrstuv",
                                  "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"};
  std::string out;
  const std::size_t size = 1 << 20;
  out.reserve(size + 256);
  unsigned x = 12345;
  std::size_t next_secret = 8192, n = 0;
  while (out.size() < size) {
    x = x * 1103515245 + 12345;
    out += words[(x >> 8) % (sizeof words / sizeof *words)];
    if ((x >> 4) % 5 == 0) out += std::to_string((x >> 12) % 100000);
    if ((x >> 6) % 11 == 0) {
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(x) * 2654435761ULL);
      out += hex;
    }
    out += (x >> 20) % 13 == 0 ? '\n' : ' ';
    if (secrets && out.size() >= next_secret) {
      out += samples[n++ % (sizeof samples / sizeof *samples)];
      out += ' ';
      next_secret += 8192;
    }
  }
  out.resize(size);
  return out;
}

struct Figures {
  double off = 1e18, on = 1e18, alone = 1e18, text = 1e18;
  std::uint32_t masked = 0;
};

Figures measure(const redact::Redactor& r, const std::string& body, int rounds) {
  Figures f;
  for (int i = 0; i < rounds; ++i) {
    double t0 = cpu_ms();
    {
      auto d = json::parse(body);
      std::string out = json::write(*d);
      if (out.size() < body.size() / 2) std::abort();
    }
    double t1 = cpu_ms();
    {
      auto d = json::parse(body);
      redact::Tally tally = r.tally();
      redact::mask_json(r, *d, d->GetAllocator(), tally);
      std::string out = json::write(*d);
      f.masked = tally.total();
    }
    double t2 = cpu_ms();
    auto d = json::parse(body);
    double t3 = cpu_ms();
    redact::Tally tally = r.tally();
    redact::mask_json(r, *d, d->GetAllocator(), tally);
    double t4 = cpu_ms();
    std::string out;
    redact::mask_json_text(r, body, out, tally);
    double t5 = cpu_ms();
    f.off = std::min(f.off, t1 - t0);
    f.on = std::min(f.on, t2 - t1);
    f.alone = std::min(f.alone, t4 - t3);
    f.text = std::min(f.text, t5 - t4);
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  auto compiled = redact::Redactor::compile(redact::Spec{});
  const auto& r = *std::get<std::shared_ptr<const redact::Redactor>>(compiled);
  std::printf("detectors: %zu (every built-in); result: 1 MiB of text in one content item; best of %d rounds\n",
              r.size(), rounds);
  for (bool secrets : {false, true}) {
    std::string text = text_of(secrets);
    std::string body = R"({"content":[{"type":"text","text":)" + json::quote(text) + "}]}";
    Figures f = measure(r, body, rounds);
    std::printf(
        "RESULT %s off_ms=%.2f on_ms=%.2f redaction_ms=%.2f mask_json_ms=%.2f mask_json_text_ms=%.2f masked=%u\n",
        secrets ? "secret-every-8KiB" : "no-secret", f.off, f.on, f.on - f.off, f.alone, f.text, f.masked);
  }
  return 0;
}
