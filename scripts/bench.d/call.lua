-- wrk script: tools/call on an initialised MCP session.
-- Environment: MCP_SESSION (session id), MCP_TOOL (tool name).
local session = os.getenv("MCP_SESSION")
local tool = os.getenv("MCP_TOOL") or "echo"
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = session
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. tool ..
           '","arguments":{"text":"hello"}}}'

local bad = 0
response = function(status, headers, body)
  if status ~= 200 or not string.find(body, '"hello"', 1, true) then bad = bad + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.1f p50_us=%d p99_us=%d errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50), latency:percentile(99),
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.timeout))
end
