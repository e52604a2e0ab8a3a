-- wrk script: one MCP request, repeated, on an initialised session.
-- Environment: MCP_SESSION (session id), MCP_BODY (the JSON-RPC request),
-- MCP_EXPECT (a substring every answer must contain).
local session = os.getenv("MCP_SESSION")
local expect = os.getenv("MCP_EXPECT") or ""
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = session
wrk.body = os.getenv("MCP_BODY")

local bad = 0
response = function(status, headers, body)
  if status ~= 200 or not string.find(body, expect, 1, true) then bad = bad + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.1f p50_us=%d p99_us=%d errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50), latency:percentile(99),
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.timeout))
end
