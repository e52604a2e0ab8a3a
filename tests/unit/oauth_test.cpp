// The upstream OAuth client's pure parts: the wire formats (challenges,
// metadata and their well-known URLs, token and error responses, PKCE,
// form and query encoding), sealed consent flows, sealed tokens and the
// token store file, and private_key_jwt assertions.
#include <doctest/doctest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "auth/jwt.hpp"
#include "loop.hpp"
#include "oauth/assertion.hpp"
#include "oauth/flow.hpp"
#include "oauth/store.hpp"
#include "oauth/wire.hpp"
#include "util/aead.hpp"
#include "util/base64.hpp"

using namespace mcpgw;
using namespace mcpgw::oauth;

TEST_CASE("oauth wire: the Bearer challenge of a 401") {
  auto c = parse_challenge(
      R"(Bearer error="invalid_token", error_description="no \"token\"", resource_metadata="https://crm.example/.well-known/oauth-protected-resource/mcp", scope="crm.read crm.write")");
  REQUIRE(c);
  CHECK(c->resource_metadata == "https://crm.example/.well-known/oauth-protected-resource/mcp");
  CHECK(c->scope == "crm.read crm.write");
  CHECK(c->error == "invalid_token");
  // Another scheme first, unquoted values, any case.
  auto d = parse_challenge(R"(Basic realm="x", bearer resource_metadata=https://a/m, Digest nonce="n")");
  REQUIRE(d);
  CHECK(d->resource_metadata == "https://a/m");
  CHECK(d->scope.empty());
  CHECK_FALSE(parse_challenge("Basic realm=\"x\""));
  CHECK_FALSE(parse_challenge("Bearerish x=1"));
  CHECK(parse_challenge("Bearer"));
}

TEST_CASE("oauth wire: well-known URLs in the order of RFC 9728, RFC 8414 and the MCP authorization spec") {
  CHECK(resource_metadata_urls("https://crm.example/public/mcp/") ==
        std::vector<std::string>{"https://crm.example/.well-known/oauth-protected-resource/public/mcp",
                                 "https://crm.example/.well-known/oauth-protected-resource"});
  CHECK(resource_metadata_urls("http://127.0.0.1:8/") ==
        std::vector<std::string>{"http://127.0.0.1:8/.well-known/oauth-protected-resource"});
  CHECK(server_metadata_urls("https://auth.example/tenant1") ==
        std::vector<std::string>{"https://auth.example/.well-known/oauth-authorization-server/tenant1",
                                 "https://auth.example/.well-known/openid-configuration/tenant1",
                                 "https://auth.example/tenant1/.well-known/openid-configuration"});
  CHECK(server_metadata_urls("https://auth.example/") ==
        std::vector<std::string>{"https://auth.example/.well-known/oauth-authorization-server",
                                 "https://auth.example/.well-known/openid-configuration"});
}

TEST_CASE("oauth wire: metadata documents are checked") {
  auto prm = parse_resource_metadata(
      R"({"resource":"https://crm/mcp","authorization_servers":["https://idp/"],"scopes_supported":["a","b"]})");
  REQUIRE(prm);
  CHECK(prm->authorization_servers == std::vector<std::string>{"https://idp/"});
  CHECK(prm->scopes_supported.size() == 2);
  CHECK(parse_resource_metadata("<html>").error() == "the answer is not JSON");
  CHECK(parse_resource_metadata("[1]").error() == "the answer is not a JSON object");
  CHECK(parse_resource_metadata(R"({"resource":"x"})").error() == "it names no authorization_servers");
  CHECK(parse_resource_metadata(R"({"authorization_servers":["http://idp.example/"]})").error() ==
        "authorization server http://idp.example/ is plain http to a host that is not loopback");

  const char* meta = R"({"issuer":"https://idp/","token_endpoint":"https://idp/token","authorization_endpoint":"https://idp/auth",
    "code_challenge_methods_supported":["S256"],"client_id_metadata_document_supported":true})";
  auto m = parse_server_metadata(meta, "https://idp");
  REQUIRE(m);
  CHECK(m->token_endpoint == "https://idp/token");
  CHECK(m->code_challenge_methods == std::vector<std::string>{"S256"});
  CHECK(m->client_id_metadata_document_supported);
  // RFC 8414 §3.3: the document must be the issuer's own.
  CHECK(parse_server_metadata(meta, "https://other").error() == "it names issuer \"https://idp/\", not https://other");
  CHECK(parse_server_metadata(R"({"issuer":"https://idp"})", "https://idp").error() == "it has no token_endpoint");
  CHECK(parse_server_metadata(R"({"issuer":"https://idp","token_endpoint":"http://evil.example/t"})", "https://idp")
            .error() == "token_endpoint http://evil.example/t is plain http to a host that is not loopback");
  CHECK(parse_server_metadata(R"({"issuer":"https://idp","token_endpoint":"/token"})", "https://idp").error() ==
        "token_endpoint is not an absolute http(s) URL");
}

TEST_CASE("oauth wire: token and error responses") {
  auto t = parse_token_response(
      R"({"access_token":"at","token_type":"bearer","expires_in":300,"refresh_token":"rt","scope":"a b"})");
  REQUIRE(t);
  CHECK(t->access_token == "at");
  CHECK(t->refresh_token == "rt");
  CHECK(t->expires_in == 300);
  CHECK(parse_token_response(R"({"access_token":"at","token_type":"Bearer","expires_in":"60"})")->expires_in == 60);
  CHECK(parse_token_response(R"({"token_type":"Bearer"})").error() == "it has no access_token");
  CHECK(parse_token_response(R"({"access_token":"secret-value","token_type":"DPoP"})").error() ==
        "its token_type is \"dpop\", not Bearer");
  CHECK(parse_token_response("garbage").error() == "the answer is not JSON");
  auto e = parse_error_response(R"({"error":"invalid_grant","error_description":"grant request is invalid\n"})");
  REQUIRE(e);
  CHECK(e->error == "invalid_grant");
  CHECK(e->description == "grant request is invalid ");
  CHECK_FALSE(parse_error_response(R"({"access_token":"x"})"));
  CHECK(parse_error_response(R"({"error":")" + std::string(5000, 'x') + "\"}")->error.size() == 300);
}

TEST_CASE("oauth wire: PKCE (RFC 7636 appendix B), encodings, cookies") {
  CHECK(pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
  std::string v = pkce_verifier();
  CHECK(v.size() == 43);
  CHECK(v != pkce_verifier());
  CHECK(form_encode({{"redirect_uri", "https://gw/cb?x=1"}, {"scope", "a b"}}) ==
        "redirect_uri=https%3A%2F%2Fgw%2Fcb%3Fx%3D1&scope=a%20b");
  auto q = parse_query("code=a%2Fb&state=x+y&bad=%zz&empty=&flag");
  CHECK(param(q, "code") == "a/b");
  CHECK(param(q, "state") == "x y");
  CHECK_FALSE(param(q, "bad"));
  CHECK(param(q, "empty") == "");
  CHECK(param(q, "flag") == "");
  CHECK(cookie("a=1; mcpgw_oauth_x=v=2; b=3", "mcpgw_oauth_x") == "v=2");
  CHECK(cookie("a=1", "b").empty());
  CHECK(origin_of("https://h:1/p?q") == "https://h:1");
  CHECK(origin_of("ftp://h/").empty());
  CHECK(clear_text_remote("http://idp.example/x"));
  CHECK_FALSE(clear_text_remote("http://127.0.0.1:9/x"));
  CHECK_FALSE(clear_text_remote("http://[::1]:9/x"));
  CHECK_FALSE(clear_text_remote("https://idp.example/x"));
}

TEST_CASE("oauth flows: sealed, bound to their key, expiring, refused when altered") {
  Aead key("mcpgw upstream oauth flow key", {"k1"});
  Flow f{"id1", "crm", "alice", "s1", "e1", "verifier", "client", unix_now(), "browser"};
  auto sealed = seal_flow(key, f);
  REQUIRE(sealed);
  auto opened = open_flow(key, *sealed, unix_now());
  REQUIRE(opened);
  CHECK(opened->principal == "alice");
  CHECK(opened->verifier == "verifier");
  CHECK(opened->browser == "browser");
  // Nothing readable in the sealed text.
  CHECK(sealed->find("alice") == std::string::npos);
  CHECK(sealed->find(base64url("alice")) == std::string::npos);
  CHECK_FALSE(open_flow(key, *sealed, unix_now() + kFlowTtl.count() + 1));
  CHECK_FALSE(open_flow(Aead("mcpgw upstream oauth flow key", {"k2"}), *sealed, unix_now()));
  // The same secret for another purpose does not open it.
  CHECK_FALSE(open_flow(Aead("mcpgw upstream oauth token key", {"k1"}), *sealed, unix_now()));
  std::string altered = *sealed;
  altered[10] = altered[10] == 'A' ? 'B' : 'A';
  CHECK_FALSE(open_flow(key, altered, unix_now()));
  CHECK_FALSE(open_flow(key, "", unix_now()));
  CHECK_FALSE(open_flow(key, std::string(5000, 'A'), unix_now()));
  // A rotated key still opens what the old one sealed.
  CHECK(open_flow(Aead("mcpgw upstream oauth flow key", {"k0", "k1"}), *sealed, unix_now()));
}

TEST_CASE("oauth tokens at rest: sealed for their server and principal; the file store") {
  Vault vault({"store key"});
  Tokens t{"access-xyz", "refresh-xyz", "crm", 100, 200, "gw"};
  auto blob = vault.seal("crm", "alice", t);
  REQUIRE(blob);
  CHECK(vault.open("crm", "alice", *blob) == t);
  CHECK_FALSE(vault.open("crm", "bob", *blob));
  CHECK_FALSE(vault.open("other", "alice", *blob));
  CHECK_FALSE(Vault({"other key"}).open("crm", "alice", *blob));
  CHECK(token_key("crm", "alice") != token_key("crm", "bob"));
  CHECK(token_key("crm", "alice").find("alice") == std::string::npos);

  auto dir = std::filesystem::temp_directory_path() / ("mcpgw-oauth-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "tokens.json").string();
  testing::Loop loop;
  {
    auto store = FileStore::open(path);
    REQUIRE(store);
    CHECK(loop.run((*store)->save(token_key("crm", "alice"), *blob)));
    CHECK(loop.run((*store)->use_once("flow:1", unix_now() + 60)).value());
    CHECK_FALSE(loop.run((*store)->use_once("flow:1", unix_now() + 60)).value());
  }
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("access-xyz") == std::string::npos);
  CHECK(text.find("alice") == std::string::npos);
  auto again = FileStore::open(path);
  REQUIRE(again);
  auto loaded = loop.run((*again)->load(token_key("crm", "alice")));
  REQUIRE(loaded);
  REQUIRE(*loaded);
  CHECK(vault.open("crm", "alice", **loaded) == t);
  CHECK(loop.run((*again)->erase(token_key("crm", "alice"))));
  CHECK_FALSE(*loop.run(FileStore::open(path).value()->load(token_key("crm", "alice"))));
  std::ofstream(path) << "{\"format\":\"something else\"}";
  CHECK(FileStore::open(path).error() ==
        "upstream_oauth.store " + path +
            ": not a token file of mcpgw (expected format mcpgw-oauth-tokens-1); move it away to start with no stored "
            "tokens");
  std::filesystem::remove_all(dir);
}

namespace {

/// A fresh key of `type` ("RSA" or "EC") in a PEM file at `path`.
void write_key(const std::string& path, const char* type) {
  EVP_PKEY* key = std::string_view(type) == "RSA" ? EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(2048))
                                                  : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  EVP_PKEY_free(key);
}

}  // namespace

TEST_CASE("oauth private_key_jwt: assertions that verify under the key, with the claims RFC 7523 asks for") {
  auto dir = std::filesystem::temp_directory_path() / ("mcpgw-oauth-keys-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* type : {"RSA", "EC"}) {
    std::string path = (dir / (std::string(type) + ".pem")).string();
    write_key(path, type);
    auto key = SigningKey::load(path);
    REQUIRE(key);
    CHECK((*key)->alg() == (std::string_view(type) == "RSA" ? "RS256" : "ES256"));
    auto jwt = (*key)->assertion("mcpgw", "https://idp/token");
    REQUIRE(jwt);
    auto parsed = auth::parse_jwt(*jwt);
    REQUIRE(parsed);
    CHECK(json::get_string(parsed->claims, "iss") == "mcpgw");
    CHECK(json::get_string(parsed->claims, "sub") == "mcpgw");
    CHECK(json::get_string(parsed->claims, "aud") == "https://idp/token");
    CHECK(json::get_string(parsed->claims, "jti"));
    CHECK(parsed->claims["exp"].GetInt64() - parsed->claims["iat"].GetInt64() == 60);
    std::FILE* f = std::fopen(path.c_str(), "rb");
    EVP_PKEY* priv = PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
    std::fclose(f);
    CHECK(auth::verify_signature(*parsed, priv));
    EVP_PKEY_free(priv);
  }
  CHECK(SigningKey::load((dir / "none.pem").string()).error() == "cannot read private_key_file " + (dir / "none.pem").string());
  std::ofstream(dir / "junk.pem") << "not a key";
  CHECK(SigningKey::load((dir / "junk.pem").string()).error() ==
        "private_key_file " + (dir / "junk.pem").string() + " holds no PEM private key (encrypted keys are not supported)");
  std::filesystem::remove_all(dir);
}
