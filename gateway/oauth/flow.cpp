#include "oauth/flow.hpp"

#include "jsonrpc/json.hpp"
#include "util/base64.hpp"

namespace mcpgw::oauth {
namespace {

constexpr std::string_view kAad = "mcpgw oauth flow v1";
/// A sealed flow is a few hundred bytes: anything far larger is not one.
constexpr std::size_t kMaxText = 4096;

}  // namespace

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Result<std::string> seal_flow(const Aead& aead, const Flow& f) {
  json::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  for (auto [key, value] : {std::pair{"id", &f.id}, {"server", &f.server}, {"principal", &f.principal},
                            {"session", &f.session}, {"elicitation", &f.elicitation_id}, {"verifier", &f.verifier},
                            {"client", &f.client_id}, {"browser", &f.browser}})
    d.AddMember(json::ref(key), json::str(*value, a), a);
  d.AddMember("created", f.created, a);
  auto box = aead.seal(json::write(d), kAad);
  if (!box) return Error{box.error()};
  return base64url(*box);
}

std::optional<Flow> open_flow(const Aead& aead, std::string_view text, std::int64_t now) {
  if (text.empty() || text.size() > kMaxText) return std::nullopt;
  auto box = unbase64url(text);
  if (!box) return std::nullopt;
  auto plain = aead.open(*box, kAad);
  auto d = plain ? json::parse(*plain) : Result<json::Document>(Error{""});
  if (!d || !d->IsObject()) return std::nullopt;
  Flow f;
  for (auto [key, out] : {std::pair{"id", &f.id}, {"server", &f.server}, {"principal", &f.principal},
                          {"session", &f.session}, {"elicitation", &f.elicitation_id}, {"verifier", &f.verifier},
                          {"client", &f.client_id}, {"browser", &f.browser}}) {
    auto v = json::get_string(*d, key);
    if (!v) return std::nullopt;
    *out = std::string(*v);
  }
  const json::Value* created = json::find(*d, "created");
  if (!created || !created->IsInt64()) return std::nullopt;
  f.created = created->GetInt64();
  if (f.id.empty() || f.server.empty() || f.created > now + 60 || now - f.created > kFlowTtl.count()) return std::nullopt;
  return f;
}

}  // namespace mcpgw::oauth
