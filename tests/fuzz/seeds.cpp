// Seed corpora for the fuzz targets: `fuzz_seeds DIR` writes DIR/<target>,
// one input per file; fuzz_token and fuzz_era inputs start with a mode byte
// (fuzz_common.hpp), fuzz_jsonrpc and fuzz_config inputs are bare texts.
// The token seeds include real tokens sealed by saga::Keyring with the
// targets' keys, so the raw mode starts from tokens that open, and payloads
// with every claim right, so the signing mode starts past every check.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.hpp"
#include "mcp/era.hpp"

using namespace mcpgw;
namespace fs = std::filesystem;

namespace {

int written = 0;

void put_raw(const fs::path& dir, std::string_view body) {
  fs::create_directories(dir);
  std::ofstream out(dir / ("seed-" + std::to_string(written++)), std::ios::binary);
  out.write(body.data(), static_cast<std::streamsize>(body.size()));
}

void put(const fs::path& dir, std::uint8_t mode, std::string_view body) {
  put_raw(dir, std::string(1, static_cast<char>(mode)) + std::string(body));
}

const char* kStates[] = {
    R"({})",
    R"({"call":{"name":"bank:transfer","arguments":{"accountId":"A-1","amount":5}},"inputRequests":{"confirm":{"method":"elicitation/create","params":{"message":"Send 5 USD?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}}})",
    R"({"n":[1,-2,3.5,0.25,-0.0,123456789012345678,-123456789012345678,123456.789012345,true,false,null,"\u00e9\ud83d\ude00\u0000"]})",
    R"([[[{"a":[{"b":{}}]}]]])",
};

void token_seeds(const fs::path& dir) {
  // Raw tokens sealed by the keyring under test (and by a keyring holding
  // only the rotated-out key), valid for ten years.
  for (int kind = 0; kind < 2; ++kind) {
    const saga::Claims& want = fuzz::expected(kind == 1);
    const std::uint8_t mode = kind == 1 ? fuzz::kSagaKind : 0;
    for (const char* state : kStates) {
      for (const auto& key : fuzz::kKeys) {
        saga::Keyring ring({key}, std::chrono::hours(24 * 3650));
        saga::Claims c;
        c.kind = want.kind;
        c.principal = want.principal;
        c.target = want.target;
        c.args_digest = want.args_digest;
        auto s = json::parse(state);
        c.state.CopyFrom(*s, c.state.GetAllocator());
        auto token = ring.seal(std::move(c));
        if (token) put(dir, mode, *token);
      }
    }
  }
  put(dir, 0, "mcpgw1.e30.AAAA");
  put(dir, 0, "mcpgw1..");
  put(dir, 0, "mcpgw2.e30.e30");

  // Payloads for the harness to sign: every claim right, then each one wrong.
  const saga::Claims& m = fuzz::expected(false);
  auto payload = [&](std::string_view k, std::string_view p, std::string_view t, std::string_view a,
                     std::string_view e, std::string_view s) {
    return R"({"k":)" + json::quote(k) + R"(,"p":)" + json::quote(p) + R"(,"t":)" + json::quote(t) + R"(,"a":)" +
           json::quote(a) + R"(,"i":"0123456789abcdef01234567","e":)" + std::string(e) + R"(,"s":)" + std::string(s) +
           "}";
  };
  const std::string later = "4102444800";  // 2100-01-01
  for (const char* state : kStates) {
    put(dir, fuzz::kSignPayload, payload("mrtr", m.principal, m.target, m.args_digest, later, state));
    put(dir, fuzz::kSignPayload | fuzz::kOldKey | fuzz::kSagaKind,
        payload("saga", m.principal, m.target, m.args_digest, later, state));
  }
  put(dir, fuzz::kSignPayload, payload("saga", m.principal, m.target, m.args_digest, later, "{}"));
  put(dir, fuzz::kSignPayload | fuzz::kSagaKind | fuzz::kAnyTarget,
      payload("saga", m.principal, "tools/call bank:close", "", later, kStates[1]));
  put(dir, fuzz::kSignPayload, payload("mrtr", "mallory", m.target, m.args_digest, later, "{}"));
  put(dir, fuzz::kSignPayload, payload("mrtr", m.principal, "tools/call bank:close", m.args_digest, later, "{}"));
  put(dir, fuzz::kSignPayload, payload("mrtr", m.principal, m.target, std::string(64, '0'), later, "{}"));
  put(dir, fuzz::kSignPayload, payload("mrtr", m.principal, m.target, m.args_digest, "1", "{}"));
  put(dir, fuzz::kSignPayload, payload("mrtr", m.principal, m.target, m.args_digest, "\"4102444800\"", "{}"));
  put(dir, fuzz::kSignPayload, payload("mrtr", m.principal, m.target, m.args_digest, "4102444800.5", "null"));
  put(dir, fuzz::kSignPayload, R"({"k":"mrtr"})");
  put(dir, fuzz::kSignPayload, R"([1,2,3])");
  put(dir, fuzz::kSignPayload, R"({"k":)");
  put(dir, fuzz::kSignPayload, std::string(300, '[') + std::string(300, ']'));
}

void era_seeds(const fs::path& dir) {
  for (const char* h : {"bank:transfer", "  =?base64?w6lsw6k=?=\t", "=?base64?!!?=", "=?base64?" "?=", "",
                        "file:///tmp/a%20b.txt"})
    put(dir, fuzz::kHeaderValue, h);
  put(dir, fuzz::kHeaderValue, mcp::encode_header_value("caf\xc3\xa9 \x01 "));

  const std::string meta =
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"fuzz","version":"1"},"io.modelcontextprotocol/logLevel":"warning"})";
  const std::string call = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bank:transfer","arguments":{"accountId":"A-1","amount":5,"memo":"caf\u00e9"},)" + meta + "}}";
  const std::string tool =
      R"({"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"t","inputSchema":{"type":"object","properties":{"accountId":{"type":"string","x-mcp-header":"Account"},"opts":{"type":"object","properties":{"fast":{"type":"boolean","x-mcp-header":"Fast"}}},"n":{"type":"integer","x-mcp-header":"N"}}},"arguments":{"accountId":" A-1 ","opts":{"fast":true},"n":7},)" + meta + "}}";
  for (const std::string& body : {call, tool}) {
    put(dir, fuzz::kMessage, body);
    put(dir, fuzz::kMessage | fuzz::kWithHeader, "2026-07-28\n" + body);
    put(dir, fuzz::kMessage | fuzz::kWithHeader, "2025-11-25\n" + body);
  }
  put(dir, fuzz::kMessage, "[" + call + "," + tool + R"(,{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},{"id":2},7])");
  put(dir, fuzz::kMessage, R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}})");
  put(dir, fuzz::kMessage, R"({"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///a","_meta":{"io.modelcontextprotocol/protocolVersion":5,"io.modelcontextprotocol/clientCapabilities":[]}}})");
  put(dir, fuzz::kMessage, R"({"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"p","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}})");
  put(dir, fuzz::kMessage, R"({"jsonrpc":"2.0","id":5,"method":"initialize","params":{}})");
  put(dir, fuzz::kMessage, "[]");
  put(dir, fuzz::kMessage, "{");

  for (const char* b : {"", "QQ==", "QUI=", "QUJD", "QR==", "QUJ", "QUI", "-_-_", "+/+/", "A===", "AAAA====", "\xff\x7f"})
    put(dir, fuzz::kBase64, b);
}

void jsonrpc_seeds(const fs::path& dir) {
  for (const char* body : {
           R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}})",
           R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
           R"({"jsonrpc":"2.0","id":"a-1","result":{"content":[{"type":"text","text":"ok"}],"isError":false}})",
           R"({"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found","data":{"x":[1,2.5,null]}}})",
           R"([{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"n"},{"id":2},3,[]])",
           R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":null,"method":"ping"})",
           R"({"jsonrpc":"1.0","id":1,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a:b","arguments":{"s":"\u00e9\ud83d\ude00","n":-9223372036854775808,"f":1e308}}})",
           R"({"jsonrpc":"2.0","id":22222222222222222222222222222222222222222222222222222221,"method":"ping"})",
           R"([{"jsonrpc":"2.0","id":-0,"method":"a"},{"jsonrpc":"2.0","id":1e2,"result":{}},{"jsonrpc":"2.0","id":0.10,"method":7}])",
           "{\"jsonrpc\":\"2.0\",\"id\":\"\xC3(\",\"method\":\"tools/call\",\"params\":{\"name\":\"a\xF0\x9F\x98\",\"x\":\"\\udc00\"}}",
           "[]", "{", "", "null", "\"x\""})
    put_raw(dir, body);
}

void scan_seeds(const fs::path& dir) {
  for (const char* body : {
           R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok \u00e9 \ud83d\ude00"}],"isError":false}})",
           R"({"result":{"content":[{"type":"image","data":"QUJD","mimeType":"image/png"}],"isError":true},"id":12,"jsonrpc":"2.0"})",
           R"({"jsonrpc":"2.0","id":2,"result":{"_meta":{"nextTool":{"name":"a:b","arguments":{}}},"content":[]}})",
           R"({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"resource_link","uri":"file:///a"}],"resultType":"complete"}})",
           R"({"jsonrpc":"2.0","id":4,"result":{"isError":false,"isError":true,"a":[1,-0,2.50,1e5,1E-400,true,null,{"b":[[]]}]}})",
           R"( { "jsonrpc" : "2.0" , "id" : 5 , "result" : { "a" : "\"\\\/\b\f\n\r\t" } } )",
           "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"a\":\"caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"a\":\"\xC3(\"}}",
           R"({"jsonrpc":"2.0","id":8,"result":{"a":"\udc00","b":1e400}})",
           R"({"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"x"}})",
           R"({"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"t","arguments":{ "n" : 2.50, "d":1, "d":2, "s":"é"}}})",
           R"({"params":{"_meta":{"progressToken":1},"arguments":{"a":[{"b":null}]}},"method":"tools/call","id":"x","jsonrpc":"2.0"})"})
    put_raw(dir, body);
}

void config_seeds(const fs::path& dir) {
  for (const char* yaml : {
           "servers:\n  - name: bank\n    command: ./bank\n    args: [--x]\n    slices: {read: [\"get_*\"]}\n",
           "listen: {host: 127.0.0.1, port: ${PORT}, path: /mcp, tls: {cert_file: c.pem, key_file: k.pem}}\n"
           "servers:\n  - {name: web, transport: http, url: \"https://h/mcp\", headers: {A: \"${TOKEN}\"}, "
           "tls: {ca_file: ca.pem, verify: false}, max_response_bytes: 4096}\n",
           "auth:\n  bearer_tokens:\n    - {token: \"${TOKEN}\", name: ci, modes: [ro]}\n"
           "modes:\n  ro: {description: r, include_slices: [read]}\ndefault_mode: ro\nservers: []\n",
           "chain: {resolve: true, max_depth: 3, merge: last}\nwelcome: {strategy: tool, tool: \"a:b\", arguments: {x: 1}}\n"
           "sagas: {secret: [\"${EMPTY:-k1}\", k2], ttl_s: 60}\nnaming: {separator: \"__\", max_length: 64}\nservers: []\n",
           "plugins:\n  - path: ./p.so\n    config: ${YAML}\nservers: []\n", "servers: [", "{}", "- a\n- b\n",
           "listen: {port: 99999}\n",
           "limits: {calls_per_s: 5, burst: 10, max_batch_size: 0, batch_concurrency: 2, max_client_requests_per_call: 3,\n"
           "         max_client_requests_per_session: 5}\nservers: []\n"})
    put_raw(dir, yaml);
}

void sse_seeds(const fs::path& dir) {
  // Mode byte: chunking seed in the low bits, event limit in the top three.
  const char* streams[] = {
      "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
      "id: 0\nretry: 100\ndata:\n\n: ping\n\nid: 1\r\ndata: a\r\ndata: b\r\n\r\n",
      "data: x\r\rdata: yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\ndata: z\n\nid\nevent: e\ndata\n\n",
  };
  for (const char* s : streams)
    for (std::uint8_t mode : {0x00, 0x07, 0x40, 0x83}) put(dir, mode, s);
}

void search_seeds(const fs::path& dir) {
  // Limit byte; documents (0x01 between them, 0x02 between fields); 0x00; the query.
  const std::string doc = "\x01", field = "\x02";
  const std::string corpus = "bank:get_account_balance" + field + "Get Account Balance" + field +
                             "Returns the current balance of one account." + field + "accountId e.g. acc_savings_001" +
                             doc + "bank:list_accounts" + field + "List Accounts" + field +
                             "Lists the customer's accounts." + field + doc + "rates:get_exchange_rates" + field + field +
                             "Exchange rates from one base currency" + field + "base ISO code";
  for (const char* q : {"account balance", "getHTTPStatus transferring entries", "", "the of and", "excha",
                        "\xff\xfe balance"})
    for (char limit : {'\x08', '\x01', '\x3f'}) put_raw(dir, std::string(1, limit) + corpus + '\0' + q);
}

void jwt_seeds(const fs::path& dir) {
  // Mode 0: header values as clients send them.
  for (const char* v : {"Bearer static-token", "Bearer a.b.c", "bearer eyJhbGciOiJub25lIn0.e30.", "Basic eA==", ""})
    put(dir, 0, v);
  // Mode 1: header and claims the harness signs (RS256, kid "rsa").
  const char* header = R"({"alg":"RS256","kid":"rsa","typ":"at+jwt"})";
  for (const char* claims :
       {R"({"iss":"https://idp.test/","aud":"https://gw.test/mcp","sub":"alice","scope":"mcp ro","exp":1800000300})",
        R"({"iss":"https://idp.test/","aud":["x","https://gw.test/mcp"],"sub":"b","scp":["ro"],"exp":1800000300,"nbf":1799999990})",
        R"({"iss":"https://idp.test/","aud":"https://gw.test/mcp","sub":"c","scope":"mcp","exp":1.5e9})"})
    put(dir, 1, std::string(header) + "\n" + claims);
  // Mode 2: JWKS documents.
  put(dir, 2, R"({"keys":[{"kty":"EC","crv":"P-256","kid":"e","x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"}]})");
  put(dir, 2, R"({"keys":[{"kty":"RSA","kid":"r","n":"AQAB","e":"AQAB"},{"kty":"OKP"}]})");
}

void address_seeds(const fs::path& dir) {
  // Hosts as URLs carry them: every spelling the guard must see through.
  for (const char* h : {"169.254.169.254", "0251.0376.0251.0376", "2852039166", "0xa9fea9fe", "169.254.43518", "127.1",
                        "0x7f.1", "012.0.0.1", "0", "[::ffff:127.0.0.1]", "::ffff:7f00:1", "::127.0.0.1",
                        "fe80::1%25eth0", "fd00:ec2::254", "64:ff9b::10.0.0.1", "2002:a00:1::1", "::",
                        "metadata.google.internal.", "localhost", "idp.example.com", "1:2:3:4:5:6:7::", "8.8.8.8"})
    put_raw(dir, h);
}

void redact_seeds(const fs::path& dir) {
  // Texts, JSON results and audit-like lines holding secrets of each kind.
  for (const char* s : {
           "id AKIAIOSFODNN7EXAMPLE and aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
           "ghp_16C7e42F292c6912E7710c838347Ae178B4a glpat-xxxxxxxxxxxxxxxxxxxx xoxb-1234567890-abcdefghij",
           "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX sk_live_4eC39HqLyjWDarjtT1zdp7dc",
           "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- AIzaSyA1234567890abcdefghijklmnopqrstuv",
           "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N password=hunter22 EMP-123456",
           R"({"content":[{"type":"text","text":"key \u0041KIAIOSFODNN7EXAMPLE"},{"type":"image","data":"AKIAIOSFODNN7EXAMPLE"}],)"
           R"("structuredContent":{"token":"ghp_16C7e42F292c6912E7710c838347Ae178B4a","n":[1,2.5,null,true]}})",
           R"({"event":"call","arguments":{"password":"hunter22","ticket #42":"ticket #42"},"reason":"\"quoted\" \ud83d"})",
           "call \"password=hunter22 and \\",
       })
    put_raw(dir, s);
}

void expr_seeds(const fs::path& dir) {
  // The expression; 0x00; the call's arguments.
  const std::string args = R"({"schema":"prod","rows":[1,2,3],"opts":{"cascade":true},"tags":["a"]})";
  for (const char* e :
       {"args.schema == \"prod\"", "tool.annotations.readOnlyHint == true || \"dba\" in principal.claims.groups",
        "args.rows.exists(r, r > 2) && args.rows.all(r, r > 0)", "has(args.opts.cascade) && !has(args.x)",
        "principal.claims.sub.matches('^al') && tool.name.startsWith('db:') && size(args.tags) == 1",
        "[args.schema, principal.name] == ['prod', 'alice'] || {'k': args.rows}.k[0] / 2 >= 0.5",
        "mode == 'all' && client.name + '/' + client.version != '' && 'mcp:admin' in principal.scopes"})
    put_raw(dir, std::string(e) + '\0' + args);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR   (writes DIR/<target> for each fuzz target)\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  token_seeds(root / "fuzz_token");
  era_seeds(root / "fuzz_era");
  jsonrpc_seeds(root / "fuzz_jsonrpc");
  scan_seeds(root / "fuzz_scan");
  config_seeds(root / "fuzz_config");
  sse_seeds(root / "fuzz_sse");
  search_seeds(root / "fuzz_search");
  jwt_seeds(root / "fuzz_jwt");
  address_seeds(root / "fuzz_address");
  redact_seeds(root / "fuzz_redact");
  expr_seeds(root / "fuzz_expr");
  std::printf("fuzz_seeds: %d seeds in %s\n", written, root.c_str());
  return 0;
}
