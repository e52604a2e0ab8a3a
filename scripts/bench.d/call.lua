-- wrk script: one MCP request, repeated, on an initialised session, or
-- statelessly (MCP 2026-07-28).
-- Environment: MCP_SESSION (session id; empty for a stateless request),
-- MCP_BODY (the JSON-RPC request), MCP_EXPECT (a substring every answer must
-- contain); for a stateless request MCP_METHOD and MCP_NAME (the Mcp-Method
-- and Mcp-Name headers); MCP_AUTH, when set, the Authorization header.
local session = os.getenv("MCP_SESSION") or ""
local expect = os.getenv("MCP_EXPECT") or ""
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
if session ~= "" then
  wrk.headers["Mcp-Session-Id"] = session
else
  wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
  wrk.headers["Mcp-Method"] = os.getenv("MCP_METHOD")
  wrk.headers["Mcp-Name"] = os.getenv("MCP_NAME")
end
wrk.body = os.getenv("MCP_BODY")
local auth = os.getenv("MCP_AUTH") or ""
if auth ~= "" then wrk.headers["Authorization"] = auth end

-- Answers that were not a 200 carrying MCP_EXPECT, per thread (a global, so
-- that done() can read it through the thread).
bad = 0
response = function(status, headers, body)
  if status ~= 200 or not string.find(body, expect, 1, true) then bad = bad + 1 end
end

local threads = {}
setup = function(thread) table.insert(threads, thread) end

done = function(summary, latency, requests)
  local wrong = 0
  for _, t in ipairs(threads) do wrong = wrong + t:get("bad") end
  io.write(string.format("RESULT rps=%.1f p50_us=%d p99_us=%d errors=%d requests=%d bad=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50), latency:percentile(99),
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.timeout,
    summary.requests, wrong))
end
