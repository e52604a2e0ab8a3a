#include "mcp/trace.hpp"

#include <algorithm>

#include "util/random.hpp"

namespace mcpgw::mcp {
namespace {

bool hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool hex_id(std::string_view s, std::size_t size) {
  if (s.size() != size) return false;
  bool nonzero = false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    nonzero = nonzero || c != '0';
  }
  return nonzero;
}

}  // namespace

std::optional<TraceContext> TraceContext::parse(std::string_view v) {
  // version "-" trace-id "-" parent-id "-" flags; a later version may add
  // fields after a dash, version ff is invalid.
  if (v.size() < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-') return std::nullopt;
  std::string_view version = v.substr(0, 2);
  if (!hex(version) || version == "ff") return std::nullopt;
  if (version == "00" && v.size() != 55) return std::nullopt;
  if (v.size() > 55 && v[55] != '-') return std::nullopt;
  std::string_view flags = v.substr(53, 2);
  if (!hex(flags)) return std::nullopt;
  if (!hex_id(v.substr(3, 32), 32) || !hex_id(v.substr(36, 16), 16)) return std::nullopt;
  return TraceContext{HexId<32>(v.substr(3, 32)), HexId<16>(v.substr(36, 16)), std::string(flags)};
}

TraceContext TraceContext::fresh() { return TraceContext{HexId<32>::random(), HexId<16>::random(), "01"}; }

TraceContext TraceContext::child() const { return TraceContext{trace_id, HexId<16>::random(), flags}; }

std::string TraceContext::header() const {
  std::string h;
  h.reserve(55);
  h.append("00-").append(trace_id.view()).append("-").append(span_id.view()).append("-").append(flags);
  return h;
}

std::optional<TraceContext> trace_of(const json::Value* params) {
  const json::Value* meta = params && params->IsObject() ? json::find(*params, "_meta") : nullptr;
  auto v = meta && meta->IsObject() ? json::get_string(*meta, kMetaTraceparent) : std::nullopt;
  return v ? TraceContext::parse(*v) : std::nullopt;
}

void adopt_traceparent(jsonrpc::Message& m, std::string_view traceparent) {
  if (!m.is_request() || !TraceContext::parse(traceparent)) return;
  auto& doc = m.doc();
  auto& a = doc.GetAllocator();
  json::Value* params = json::find(doc, "params");
  if (!params) {
    json::set(doc, "params", json::Value(rapidjson::kObjectType), a);
    params = json::find(doc, "params");
  }
  if (!params->IsObject()) return;
  json::Value* meta = json::find(*params, "_meta");
  if (!meta) {
    json::set(*params, "_meta", json::Value(rapidjson::kObjectType), a);
    meta = json::find(*params, "_meta");
  }
  if (!meta->IsObject() || json::find(*meta, kMetaTraceparent)) return;
  json::set(*meta, kMetaTraceparent, json::str(traceparent, a), a);
}

}  // namespace mcpgw::mcp
