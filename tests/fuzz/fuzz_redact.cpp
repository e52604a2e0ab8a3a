// libFuzzer target: redaction (gateway/redact/*), which reads every text
// the gateway relays and writes when redact: is on. The input is read three
// ways with every built-in detector and one operator pattern: as text, as
// JSON text (mask_json_text: what the audit log does) and, when it parses,
// as a JSON document (mask_json: what results and arguments go through).
// Besides sanitizer reports, a crash is any broken property: masking and
// detecting disagree; masked text without the mask's marker; masked JSON
// text that no longer parses, or a document whose structure (types, keys,
// numbers, array lengths) masking changed; a string changed that does not
// hold a mask.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_common.hpp"
#include "redact/json.hpp"
#include "redact/redactor.hpp"

using namespace mcpgw;

namespace {

const redact::Redactor& detectors() {
  static const auto r = [] {
    redact::Spec spec;
    spec.patterns = {{"employee_id", "EMP-[0-9]{6}"}, {"ticket", "ticket #([0-9]+)"}};
    auto compiled = redact::Redactor::compile(spec);
    MCPGW_FUZZ_CHECK(std::holds_alternative<std::shared_ptr<const redact::Redactor>>(compiled), "the detectors compile");
    return std::get<std::shared_ptr<const redact::Redactor>>(compiled);
  }();
  return *r;
}

bool has_mask(std::string_view s) { return s.find("[REDACTED:") != std::string_view::npos; }

/// `after` is `before` with only strings changed, each to one holding a mask.
void same_shape(const json::Value& before, const json::Value& after) {
  MCPGW_FUZZ_CHECK(before.GetType() == after.GetType(), "a value changed its type");
  if (before.IsString()) {
    std::string_view a(before.GetString(), before.GetStringLength()), b(after.GetString(), after.GetStringLength());
    MCPGW_FUZZ_CHECK(a == b || has_mask(b), "a string changed without a mask");
  } else if (before.IsArray()) {
    MCPGW_FUZZ_CHECK(before.Size() == after.Size(), "an array changed its length");
    for (rapidjson::SizeType i = 0; i < before.Size(); ++i) same_shape(before[i], after[i]);
  } else if (before.IsObject()) {
    MCPGW_FUZZ_CHECK(before.MemberCount() == after.MemberCount(), "an object changed its members");
    auto b = before.MemberBegin();
    auto a = after.MemberBegin();
    for (; b != before.MemberEnd(); ++b, ++a) {
      MCPGW_FUZZ_CHECK(b->name == a->name, "a key changed");
      same_shape(b->value, a->value);
    }
  } else if (before.IsNumber()) {
    MCPGW_FUZZ_CHECK(before == after, "a number changed");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const redact::Redactor& r = detectors();
  std::string_view text(reinterpret_cast<const char*>(data), size);

  redact::Tally tally = r.tally();
  std::string out;
  const bool masked = r.mask(text, out, tally);
  MCPGW_FUZZ_CHECK(masked == r.detects(text), "mask and detects disagree");
  MCPGW_FUZZ_CHECK(!masked || (has_mask(out) && tally.total() > 0), "masked text without a mask");

  std::string json_out;
  const bool json_masked = redact::mask_json_text(r, text, json_out, tally);
  auto before = json::parse(text);
  if (json_masked && before) {
    auto after = json::parse(json_out);
    MCPGW_FUZZ_CHECK(after.ok(), "masked JSON text does not parse");
    same_shape(*before, *after);
  }
  if (before) {
    json::Document doc = json::clone(*before);
    redact::Tally t = r.tally();
    redact::mask_json(r, doc, doc.GetAllocator(), t);
    same_shape(*before, doc);
  }
  // The escapes round-trip.
  MCPGW_FUZZ_CHECK(redact::unescape(redact::escape(text)) == text, "escape and unescape do not round-trip");
  return 0;
}
