#include "oauth/store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "jsonrpc/json.hpp"
#include "oauth/flow.hpp"
#include "util/base64.hpp"
#include "util/hex.hpp"
#include "util/offload.hpp"

namespace mcpgw::oauth {
namespace {

/// The file's format, named in it so another layout is refused, not misread.
constexpr std::string_view kFileFormat = "mcpgw-oauth-tokens-1";

std::string aad_of(std::string_view server, std::string_view principal) {
  return "mcpgw oauth tokens v1\n" + std::string(server) + "\n" + std::string(principal);
}

Result<void> write_file(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Error{"cannot write " + tmp + ": " + std::strerror(errno)};
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      ::close(fd);
      return Error{"cannot write " + tmp + ": " + why};
    }
    done += static_cast<std::size_t>(n);
  }
  bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || std::rename(tmp.c_str(), path.c_str()) != 0)
    return Error{"cannot replace " + path + ": " + std::strerror(errno)};
  return {};
}

}  // namespace

std::string token_key(std::string_view server, std::string_view principal) {
  return sha256_hex(std::string(server) + "\n" + std::string(principal), 16);
}

Vault::Vault(const std::vector<std::string>& secrets) : aead_("mcpgw upstream oauth token key", secrets) {}

Result<std::string> Vault::seal(std::string_view server, std::string_view principal, const Tokens& t) const {
  json::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("access_token", json::str(t.access_token, a), a);
  d.AddMember("refresh_token", json::str(t.refresh_token, a), a);
  d.AddMember("scope", json::str(t.scope, a), a);
  d.AddMember("obtained_at", t.obtained_at, a);
  d.AddMember("expires_at", t.expires_at, a);
  d.AddMember("client_id", json::str(t.client_id, a), a);
  auto box = aead_.seal(json::write(d), aad_of(server, principal));
  if (!box) return Error{box.error()};
  return base64url(*box);
}

std::optional<Tokens> Vault::open(std::string_view server, std::string_view principal, std::string_view blob) const {
  auto box = unbase64url(blob);
  if (!box) return std::nullopt;
  auto plain = aead_.open(*box, aad_of(server, principal));
  if (!plain) return std::nullopt;
  auto d = json::parse(*plain);
  if (!d || !d->IsObject()) return std::nullopt;
  auto text = [&](const char* k) { return std::string(json::get_string(*d, k).value_or("")); };
  auto number = [&](const char* k) -> std::int64_t {
    const json::Value* v = json::find(*d, k);
    return v && v->IsInt64() ? v->GetInt64() : 0;
  };
  Tokens t{text("access_token"), text("refresh_token"), text("scope"), number("obtained_at"), number("expires_at"),
           text("client_id")};
  if (t.access_token.empty()) return std::nullopt;
  return t;
}

// --- MemoryStore ---------------------------------------------------------

Task<Result<std::optional<std::string>>> MemoryStore::load(const std::string& key) {
  util::MutexLock lk(mu_);
  auto it = records_.find(key);
  co_return it == records_.end() ? std::nullopt : std::optional<std::string>(it->second);
}

Task<Result<void>> MemoryStore::save(const std::string& key, const std::string& blob) {
  util::MutexLock lk(mu_);
  records_[key] = blob;
  co_return Result<void>{};
}

Task<Result<void>> MemoryStore::erase(const std::string& key) {
  util::MutexLock lk(mu_);
  records_.erase(key);
  co_return Result<void>{};
}

Task<Result<bool>> MemoryStore::use_once(const std::string& id, std::int64_t expires) {
  util::MutexLock lk(mu_);
  std::int64_t now = unix_now();
  std::erase_if(used_, [&](const auto& e) { return e.second < now; });
  co_return used_.emplace(id, expires).second;
}

// --- FileStore -----------------------------------------------------------

Result<std::shared_ptr<FileStore>> FileStore::open(const std::string& path) {
  auto store = std::make_shared<FileStore>(path);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file) {
    if (errno == ENOENT) return store;
    return Error{"upstream_oauth.store " + path + ": cannot read: " + std::strerror(errno)};
  }
  std::string text;
  char buf[8192];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, file.get())) text.append(buf, n);
  auto doc = json::parse(text);
  const json::Value* records = doc && doc->IsObject() ? json::find(*doc, "records") : nullptr;
  if (!doc || !doc->IsObject() || json::get_string(*doc, "format") != kFileFormat || !records || !records->IsObject())
    return Error{"upstream_oauth.store " + path + ": not a token file of mcpgw (expected format " +
                 std::string(kFileFormat) + "); move it away to start with no stored tokens"};
  // Not shared yet; the lock costs nothing and keeps records_ always under it.
  util::MutexLock lk(store->mu_);
  for (const auto& m : records->GetObject())
    if (m.value.IsString()) store->records_.emplace(m.name.GetString(), m.value.GetString());
  return store;
}

Task<Result<void>> FileStore::save(const std::string& key, const std::string& blob) {
  co_await MemoryStore::save(key, blob);
  co_return co_await persist();
}

Task<Result<void>> FileStore::erase(const std::string& key) {
  co_await MemoryStore::erase(key);
  co_return co_await persist();
}

Task<Result<void>> FileStore::persist() {
  auto write = [this]() -> Result<void> {
    json::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    d.AddMember("format", json::ref(kFileFormat), a);
    json::Value records(rapidjson::kObjectType);
    {
      util::MutexLock lk(mu_);
      for (const auto& [k, v] : records_) records.AddMember(json::str(k, a), json::str(v, a), a);
    }
    d.AddMember("records", records, a);
    return write_file(path_, json::write(d) + "\n");
  };
  auto closing = []() -> Result<void> { return Error{"the token store is closing"}; };
  co_return co_await offload(writer_, write, closing);
}

}  // namespace mcpgw::oauth
