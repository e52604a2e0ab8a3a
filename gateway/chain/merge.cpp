#include "chain/merge.hpp"

#include <rapidjson/schema.h>

#include <algorithm>
#include <array>
#include <optional>
#include <cmath>
#include <string_view>

namespace mcpgw::chain {
namespace {

std::string_view view(const json::Value& s) { return {s.GetString(), s.GetStringLength()}; }

const json::Value* structured_of(const Call& c) { return json::find(c.result, "structuredContent"); }

bool is_text_item(const json::Value& item) {
  auto type = item.IsObject() ? json::get_string(item, "type") : std::nullopt;
  return type == "text" && json::get_string(item, "text");
}

/// Appends the content items `c` contributes to `out`, and their text to
/// `text`. A call whose structured result comes without any text item adds
/// it as JSON text: the merged result may carry no structuredContent, and
/// its data must not vanish for a client that reads `content`.
void append_content(const Call& c, json::Value& out, std::string& text, json::Allocator& a) {
  bool any_text = false;
  if (const json::Value* content = json::find(c.result, "content"); content && content->IsArray()) {
    for (const auto& item : content->GetArray()) {
      out.PushBack(json::copy(item, a), a);
      if (!is_text_item(item)) continue;
      any_text = true;
      if (!text.empty()) text += '\n';
      text += *json::get_string(item, "text");
    }
  }
  if (any_text) return;
  if (const json::Value* s = structured_of(c)) {
    text = json::write(*s);
    json::Value item(rapidjson::kObjectType);
    item.AddMember("type", "text", a);
    item.AddMember("text", json::str(text, a), a);
    out.PushBack(item, a);
  }
}

json::Value text_entry(std::string_view tool, std::string_view text, json::Allocator& a) {
  json::Value e(rapidjson::kObjectType);
  e.AddMember("tool", json::str(tool, a), a);
  e.AddMember("text", json::str(text, a), a);
  return e;
}

json::Value trace_entry(const Call& c, bool is_error, json::Allocator& a) {
  json::Value e(rapidjson::kObjectType);
  e.AddMember("tool", json::str(c.tool, a), a);
  e.AddMember("arguments", json::copy(c.arguments, a), a);
  e.AddMember("isError", is_error, a);
  e.AddMember("ms", std::round(c.ms * 1000) / 1000, a);  // microsecond precision is plenty
  if (const json::Value* s = structured_of(c)) e.AddMember("structuredContent", json::copy(*s, a), a);
  return e;
}

}  // namespace

bool conforms(const json::Value& schema, const json::Value& value) {
  json::SchemaDocument sd(schema);
  json::SchemaValidator validator(sd);
  return value.Accept(validator);
}

bool admits_extra_property(const json::Value& schema, std::string_view key) {
  if (!schema.IsObject()) return false;
  // Keywords that cannot fail an object for having one more property; with
  // `type` the value is an object the schema already accepted.
  static constexpr std::array<std::string_view, 16> kHarmless = {
      "$schema", "$id",      "id",         "$comment", "title",    "description", "examples",  "default",
      "type",    "required", "deprecated", "readOnly", "writeOnly", "$defs",      "definitions", "minProperties"};
  for (const auto& m : schema.GetObject()) {
    std::string_view k = view(m.name);
    if (std::find(kHarmless.begin(), kHarmless.end(), k) != kHarmless.end()) continue;
    if (k == "properties" && m.value.IsObject() && !json::find(m.value, key)) continue;
    // `additionalProperties: true` or `{}` (anything goes) is harmless too.
    if (k == "additionalProperties" &&
        (m.value.IsTrue() || (m.value.IsObject() && m.value.ObjectEmpty())))
      continue;
    return false;
  }
  return true;
}

json::Document merge(const std::vector<Call>& calls, const Refusal* refusal,
                     const json::Value* output_schema, config::Chain::Merge mode) {
  json::Document out(rapidjson::kObjectType);
  auto& a = out.GetAllocator();
  // A refusal shows every call, so the client sees what ran before it.
  const bool show_all = mode == config::Chain::Merge::All || refusal != nullptr;
  const std::size_t first_shown = show_all ? 0 : calls.size() - 1;

  json::Value content(rapidjson::kArrayType);
  json::Value hops(rapidjson::kArrayType);  // the text of each call shown, for kHopsKey
  for (std::size_t i = first_shown; i < calls.size(); ++i) {
    std::string text;
    append_content(calls[i], content, text, a);
    if (!text.empty()) hops.PushBack(text_entry(calls[i].tool, text, a), a);
  }
  if (refusal) {
    json::Value item(rapidjson::kObjectType);
    item.AddMember("type", "text", a);
    item.AddMember("text", json::str(refusal->text, a), a);
    content.PushBack(item, a);
    hops.PushBack(text_entry(refusal->hop.tool, refusal->text, a), a);
  }
  out.AddMember("content", content, a);

  // structuredContent: with an outputSchema, the first conforming one in
  // the order the merge shows the calls (merge: last looks from the last
  // call back), so a validating client always gets what it requires; without
  // one, only where it stands for everything the content shows (one call).
  if (output_schema) {
    std::optional<std::size_t> chosen;
    for (std::size_t n = 0; n < calls.size() && !chosen; ++n) {
      std::size_t i = show_all ? n : calls.size() - 1 - n;
      if (const json::Value* s = structured_of(calls[i]); s && conforms(*output_schema, *s)) chosen = i;
    }
    if (chosen) {
      json::Value sc(*structured_of(calls[*chosen]), a);
      // A client that shows only structuredContent would hide the other
      // calls' text: carry it inside, where the schema allows one more key.
      const bool alone = !show_all && *chosen == calls.size() - 1;
      const bool room = admits_extra_property(*output_schema, kHopsKey) || catalog::declares_hops(*output_schema);
      if (!alone && sc.IsObject() && !json::find(sc, kHopsKey) && room) {
        json::Value with_hops(sc, a);
        with_hops.AddMember(json::str(kHopsKey, a), hops, a);
        if (conforms(*output_schema, with_hops)) sc = std::move(with_hops);
      }
      out.AddMember("structuredContent", sc, a);
    }
  } else if (!show_all) {
    if (const json::Value* s = structured_of(calls.back())) out.AddMember("structuredContent", json::copy(*s, a), a);
  }

  bool any_error = refusal != nullptr;
  for (const auto& c : calls) any_error |= c.is_error;
  if (any_error) out.AddMember("isError", true, a);

  json::Value meta(rapidjson::kObjectType);
  if (const json::Value* m = json::find(calls.back().result, "_meta"); m && m->IsObject()) meta = json::copy(*m, a);
  meta.RemoveMember("nextTool");
  json::Value trace(rapidjson::kArrayType);
  for (const auto& c : calls) trace.PushBack(trace_entry(c, c.is_error, a), a);
  if (refusal) trace.PushBack(trace_entry(refusal->hop, true, a), a);
  meta.AddMember("mcpgw/chain", trace, a);
  out.AddMember("_meta", meta, a);
  return out;
}

}  // namespace mcpgw::chain
