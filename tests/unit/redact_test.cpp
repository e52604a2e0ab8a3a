#include <doctest/doctest.h>

#include <string>
#include <variant>

#include "redact/detectors.hpp"
#include "redact/json.hpp"
#include "redact/redactor.hpp"

using namespace mcpgw;
using redact::Redactor;

namespace {

std::shared_ptr<const Redactor> compile(const redact::Spec& spec) {
  auto r = Redactor::compile(spec);
  REQUIRE(std::holds_alternative<std::shared_ptr<const Redactor>>(r));
  return std::get<std::shared_ptr<const Redactor>>(r);
}

const Redactor& all() {
  static const auto r = compile(redact::Spec{});
  return *r;
}

/// `text` masked by every built-in detector ("" stays "" when nothing is found).
std::string masked(std::string_view text, redact::Tally* tally = nullptr) {
  redact::Tally t = all().tally();
  std::string out;
  if (!all().mask(text, out, t)) out = std::string(text);
  if (tally) *tally = t;
  return out;
}

std::size_t index_of(const Redactor& r, std::string_view name) {
  for (std::size_t i = 0; i < r.size(); ++i)
    if (r.name(i) == name) return i;
  FAIL("no detector " << name);
  return 0;
}

struct Sample {
  const char* detector;
  const char* text;      ///< holds a secret
  const char* expected;  ///< `text` masked
};

// One or more positive samples per built-in detector, the secret in some
// surrounding text.
const Sample kPositive[] = {
    {"aws_access_key_id", "id AKIAIOSFODNN7EXAMPLE here", "id [REDACTED:aws_access_key_id] here"},
    {"aws_access_key_id", "ASIAY34FZKBOKMUTVV7A,", "[REDACTED:aws_access_key_id],"},
    {"aws_secret_access_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
     "aws_secret_access_key = [REDACTED:aws_secret_access_key]\n"},
    {"aws_secret_access_key", R"({"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"})",
     R"({"SecretAccessKey": "[REDACTED:aws_secret_access_key]"})"},
    {"github_token", "token ghp_16C7e42F292c6912E7710c838347Ae178B4a in use",
     "token [REDACTED:github_token] in use"},
    {"github_token", "gho_16C7e42F292c6912E7710c838347Ae178B4a", "[REDACTED:github_token]"},
    {"github_token", "ghu_16C7e42F292c6912E7710c838347Ae178B4a ghs_16C7e42F292c6912E7710c838347Ae178B4a",
     "[REDACTED:github_token] [REDACTED:github_token]"},
    {"github_token", "(ghr_16C7e42F292c6912E7710c838347Ae178B4a)", "([REDACTED:github_token])"},
    {"github_token",
     "github_pat_11ABCDEFG0123456789abc_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVW",
     "[REDACTED:github_token]"},
    {"gitlab_token", "use glpat-xxxxxxxxxxxxxxxxxxxx now", "use [REDACTED:gitlab_token] now"},
    {"slack_token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "[REDACTED:slack_token]"},
    {"slack_token", "xoxp-1234567890-abcdefghij", "[REDACTED:slack_token]"},
    {"slack_webhook", "post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX.",
     "post to [REDACTED:slack_webhook]."},
    {"stripe_key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:stripe_key]"},
    {"stripe_key", "key rk_live_51H8abcdefGHIJKLmnop;", "key [REDACTED:stripe_key];"},
    {"google_api_key", "key=AIzaSyA1234567890abcdefghijklmnopqrstuv&x=1", "key=[REDACTED:google_api_key]&x=1"},
    {"private_key",
     "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc+/=\n-----END RSA PRIVATE KEY-----\nafter",
     "before\n[REDACTED:private_key]\nafter"},
    {"private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA (cut short",
     "[REDACTED:private_key]"},
    {"private_key", "-----BEGIN PRIVATE KEY-----\nAA\n-----END PRIVATE KEY----- and -----BEGIN EC PRIVATE KEY-----\nBB\n-----END EC PRIVATE KEY-----",
     "[REDACTED:private_key] and [REDACTED:private_key]"},
    {"jwt",
     "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "Bearer [REDACTED:jwt]"},
    {"secret_assignment", "db password=hunter2 and more", "db password=[REDACTED:secret_assignment] and more"},
    {"secret_assignment", "DB_PASSWORD: 'c0rrect-h0rse'", "DB_PASSWORD: '[REDACTED:secret_assignment]'"},
    {"secret_assignment", R"({"client_secret": "s3cr3t-value"})", R"({"client_secret": "[REDACTED:secret_assignment]"})"},
    {"secret_assignment", "url?api_key=abc123xyz&x=1", "url?api_key=[REDACTED:secret_assignment]&x=1"},
    {"secret_assignment", "auth_token=tok_9f8e7d", "auth_token=[REDACTED:secret_assignment]"},
};

// Texts that look close but hold no secret.
const char* const kNegative[] = {
    "AKIA is a prefix; AKIAIOSFODNN7EXAMPL is one short",
    "XAKIAIOSFODNN7EXAMPLE1 is inside a longer word",
    "aws_secret_access_key = short",
    "ghp_ is a prefix and ghp_tooShort1234 is short",
    "ghx_16C7e42F292c6912E7710c838347Ae178B4a has no known prefix",
    "glpat-short",
    "xoxq-1234567890-abcdefghij",
    "https://hooks.slack.com/ alone",
    "sk_live_short and pk_live_4eC39HqLyjWDarjtT1zdp7dc is publishable",
    "AIza too short",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqh\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    "eyJhbGciOiJIUzI1NiJ9 alone is a header",
    "password: ab",
    "the password is strong; a token of thanks",
    R"({"max_tokens": 1000, "tokens": 5, "token_count": 77})",
    "password=[REDACTED:github_token]",
    "",
};

}  // namespace

TEST_CASE("redact: every built-in detector finds its samples, named and counted") {
  for (const Sample& s : kPositive) {
    CAPTURE(s.text);
    redact::Tally tally;
    CHECK(masked(s.text, &tally) == s.expected);
    CHECK(tally[index_of(all(), s.detector)] >= 1);
    CHECK(all().detects(s.text));
  }
  // Each detector has a positive sample.
  for (const auto& b : redact::builtins()) {
    bool found = false;
    for (const Sample& s : kPositive) found = found || s.detector == b.name;
    CHECK_MESSAGE(found, b.name);
  }
}

TEST_CASE("redact: text without a secret is left alone") {
  for (const char* text : kNegative) {
    CAPTURE(text);
    redact::Tally tally = all().tally();
    std::string out = "untouched";
    CHECK_FALSE(all().mask(text, out, tally));
    CHECK(out == "untouched");
    CHECK(tally.total() == 0);
    CHECK_FALSE(all().detects(text));
  }
}

TEST_CASE("redact: counts per detector, overlaps named by the specific detector") {
  redact::Tally tally;
  std::string text = "a AKIAIOSFODNN7EXAMPLE b AKIAI44QH8DHBEXAMPLE c ghp_16C7e42F292c6912E7710c838347Ae178B4a";
  CHECK(masked(text, &tally) ==
        "a [REDACTED:aws_access_key_id] b [REDACTED:aws_access_key_id] c [REDACTED:github_token]");
  CHECK(tally[index_of(all(), "aws_access_key_id")] == 2);
  CHECK(tally[index_of(all(), "github_token")] == 1);
  CHECK(tally.total() == 3);
  CHECK(all().counts_json(tally) == R"({"aws_access_key_id":2,"github_token":1})");
  CHECK(all().names_of(tally) == "aws_access_key_id, github_token");
  // token=<a GitHub token>: both match the same place; the specific one names it.
  redact::Tally t2;
  CHECK(masked("token=ghp_16C7e42F292c6912E7710c838347Ae178B4a", &t2) == "token=[REDACTED:github_token]");
  CHECK(t2.total() == 1);
  // Masked text is stable: a second pass finds nothing.
  std::string once = masked("password=hunter22 AKIAIOSFODNN7EXAMPLE");
  CHECK_FALSE(all().detects(once));
}

TEST_CASE("redact: a chosen subset, operator patterns and their errors") {
  redact::Spec spec;
  spec.all_builtins = false;
  spec.builtins = {"jwt", "github_token", "jwt"};
  spec.patterns = {{"employee_id", "EMP-[0-9]{6}"}, {"ticket", "ticket #([0-9]+)"}};
  auto r = compile(spec);
  REQUIRE(r->size() == 4);
  CHECK(r->name(0) == "github_token");
  CHECK(r->name(1) == "jwt");
  CHECK(r->is_pattern(2));
  redact::Tally tally = r->tally();
  std::string out;
  REQUIRE(r->mask("EMP-123456 and ticket #42 and AKIAIOSFODNN7EXAMPLE", out, tally));
  // The group of a pattern is what is masked; AWS is not among the chosen.
  CHECK(out == "[REDACTED:employee_id] and ticket #[REDACTED:ticket] and AKIAIOSFODNN7EXAMPLE");

  auto error_of = [](redact::Spec s) {
    auto compiled = Redactor::compile(s);
    REQUIRE(std::holds_alternative<redact::SetupError>(compiled));
    return std::get<redact::SetupError>(compiled);
  };
  redact::Spec unknown;
  unknown.all_builtins = false;
  unknown.builtins = {"jwt", "aws_keys"};
  auto e = error_of(unknown);
  CHECK(e.kind == redact::SetupError::Kind::UnknownBuiltin);
  CHECK(e.index == 1);
  CHECK(e.message.find("aws_keys") != std::string::npos);
  CHECK(e.message.find("aws_access_key_id") != std::string::npos);

  e = error_of({true, {}, {{"ok", "a"}, {"bad", "(unclosed"}}});
  CHECK(e.kind == redact::SetupError::Kind::BadRegex);
  CHECK(e.index == 1);
  CHECK(e.message.find("missing )") != std::string::npos);
  // RE2 has no backreferences (linear time): refused, not accepted.
  CHECK(error_of({true, {}, {{"backref", "(a)\\1"}}}).kind == redact::SetupError::Kind::BadRegex);
  CHECK(error_of({true, {}, {{"jwt", "x"}}}).kind == redact::SetupError::Kind::DuplicateName);
  CHECK(error_of({true, {}, {{"a", "x"}, {"a", "y"}}}).kind == redact::SetupError::Kind::DuplicateName);
  CHECK(error_of({true, {}, {{"has space", "x"}}}).kind == redact::SetupError::Kind::BadName);

  // No detector at all: nothing is ever found.
  auto none = compile({false, {}, {}});
  CHECK(none->size() == 0);
  CHECK_FALSE(none->detects("AKIAIOSFODNN7EXAMPLE"));
}

TEST_CASE("redact: JSON documents: string values masked, keys, numbers and binary payloads kept") {
  auto doc = json::parse(R"({
    "content": [
      {"type": "text", "text": "key AKIAIOSFODNN7EXAMPLE"},
      {"type": "image", "data": "AKIAIOSFODNN7EXAMPLE", "mimeType": "image/png"},
      {"type": "resource", "resource": {"uri": "file:///k", "text": "ghp_16C7e42F292c6912E7710c838347Ae178B4a"}},
      {"type": "resource", "resource": {"uri": "file:///b", "blob": "AKIAIOSFODNN7EXAMPLE"}}
    ],
    "structuredContent": {"AKIAIOSFODNN7EXAMPLE": 1, "nested": [["password=hunter22"], 7, true, null]},
    "isError": false
  })");
  REQUIRE(doc);
  redact::Tally tally = all().tally();
  CHECK(redact::mask_json(all(), *doc, doc->GetAllocator(), tally));
  CHECK(json::write(*doc) ==
        R"({"content":[{"type":"text","text":"key [REDACTED:aws_access_key_id]"},)"
        R"({"type":"image","data":"AKIAIOSFODNN7EXAMPLE","mimeType":"image/png"},)"
        R"({"type":"resource","resource":{"uri":"file:///k","text":"[REDACTED:github_token]"}},)"
        R"({"type":"resource","resource":{"uri":"file:///b","blob":"AKIAIOSFODNN7EXAMPLE"}}],)"
        R"("structuredContent":{"AKIAIOSFODNN7EXAMPLE":1,"nested":[["password=[REDACTED:secret_assignment]"],7,true,null]},)"
        R"("isError":false})");
  CHECK(tally.total() == 3);
  auto clean = json::parse(R"({"content":[{"type":"text","text":"nothing here"}]})");
  redact::Tally none = all().tally();
  CHECK_FALSE(redact::mask_json(all(), *clean, clean->GetAllocator(), none));
}

TEST_CASE("redact: JSON text: escaped literals unescaped, masked and escaped again") {
  std::string out;
  redact::Tally tally = all().tally();
  // The key is split by escapes (\u0041 is A, \n inside a PEM block).
  std::string line = R"({"msg":"id \u0041KIAIOSFODNN7EXAMPLE \"quoted\"","pem":"-----BEGIN PRIVATE KEY-----\nAAA\n-----END PRIVATE KEY-----\ttail","AKIAIOSFODNN7EXAMPLE":2,"n":[1,"ok"]})";
  REQUIRE(redact::mask_json_text(all(), line, out, tally));
  CHECK(out == R"({"msg":"id [REDACTED:aws_access_key_id] \"quoted\"","pem":"[REDACTED:private_key]\ttail","AKIAIOSFODNN7EXAMPLE":2,"n":[1,"ok"]})");
  CHECK(json::parse(out));
  CHECK(tally.total() == 2);
  // Nothing found: out untouched, false.
  std::string untouched = "x";
  CHECK_FALSE(redact::mask_json_text(all(), R"({"a":"b\"c","d":[1,2]})", untouched, tally));
  CHECK(untouched == "x");
  // Not JSON (a log line, a literal cut short): no harm, still masked.
  CHECK(redact::mask_json_text(all(), R"(call "password=hunter22 and \)", out, tally));
  CHECK(out == R"(call "password=[REDACTED:secret_assignment] and \\)");
}

TEST_CASE("redact: escape and unescape round-trip") {
  std::string s = "a\"b\\c\n\t\x01\xC3\xA9/";
  CHECK(redact::unescape(redact::escape(s)) == s);
  CHECK(redact::unescape(R"(\ud83d\ude00 \ud83d x \/ \q)") == "\xF0\x9F\x98\x80 \xEF\xBF\xBD x / q");
  CHECK(redact::unescape(R"(\u12)") == "u12");
}
