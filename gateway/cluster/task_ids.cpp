#include "cluster/task_ids.hpp"

#include "cluster/sealed_fields.hpp"
#include "util/base64.hpp"
#include "util/random.hpp"

namespace mcpgw::cluster {
namespace {

constexpr std::string_view kTaskIdPrefix = "mt1";
constexpr std::uint8_t kTaskIdFormat = 1;
/// A task id's box opens as nothing else, and nothing else opens as one.
constexpr std::string_view kTaskIdAad = "mcpgw task v1";
/// Ids longer than this are not worth opening (an id holds a few names and
/// an upstream's ids, which are short).
constexpr std::size_t kMaxId = 4096;

std::vector<std::string> keys_or_random(const std::vector<std::string>& secrets) {
  if (!secrets.empty()) return secrets;
  return {random_hex(32)};
}

}  // namespace

TaskIds::TaskIds(const std::vector<std::string>& secrets)
    : aead_("mcpgw cluster task key", keys_or_random(secrets)) {}

Result<std::string> TaskIds::seal(const TaskRef& r) const {
  FieldWriter w(kTaskIdFormat);
  w.u64(static_cast<std::uint64_t>(r.kind))
      .text(r.principal)
      .text(r.server)
      .text(r.upstream_id)
      .text(r.upstream_session)
      .u64(static_cast<std::uint64_t>(r.created_ms))
      .u64(static_cast<std::uint64_t>(r.expires_ms));
  auto box = aead_.seal(w.plain(), kTaskIdAad, Aead::Nonce::Synthetic);
  if (!box) return Error{"sealing the task id failed: " + box.error()};
  std::string id = std::string(kTaskIdPrefix) + base64url(*box);
  if (id.size() > kMaxId) return Error{"the upstream's task id is too long to be named (" + std::to_string(r.upstream_id.size()) + " bytes)"};
  return id;
}

std::optional<TaskRef> TaskIds::open(std::string_view id) const {
  if (id.size() > kMaxId || id.substr(0, kTaskIdPrefix.size()) != kTaskIdPrefix) return std::nullopt;
  auto box = unbase64url(id.substr(kTaskIdPrefix.size()));
  auto plain = box ? aead_.open(*box, kTaskIdAad) : std::nullopt;
  if (!plain) return std::nullopt;
  FieldReader rd(*plain, kTaskIdFormat);
  TaskRef r;
  auto kind = rd.u64();
  r.principal = rd.text();
  r.server = rd.text();
  r.upstream_id = rd.text();
  r.upstream_session = rd.text();
  r.created_ms = static_cast<std::int64_t>(rd.u64());
  r.expires_ms = static_cast<std::int64_t>(rd.u64());
  if (!rd.done() || (kind != 1 && kind != 2)) return std::nullopt;
  r.kind = static_cast<TaskRef::Kind>(kind);
  return r;
}

}  // namespace mcpgw::cluster
