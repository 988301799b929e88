-- wrk script for the refresh benchmark (run with -t1): every connection rotates a refresh-token
-- chain. args[1]: a file with one refresh token per line, at least one per connection.
-- A request takes the oldest unused token; its answer gives the chain's next token back.
local queue, head, tail = {}, 1, 0
-- wrk calls request() once before any connection opens, to check the script, and never sends
-- that request: it must not use up a token.
local checked = false

function init(args)
  for line in io.lines(args[1]) do
    tail = tail + 1
    queue[tail] = line
  end
end

local function refresh(token)
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, '{"refreshToken":"' .. token .. '"}')
end

function request()
  if not checked or head > tail then
    checked = true
    return refresh("none")
  end
  local token = queue[head]
  queue[head] = nil
  head = head + 1
  return refresh(token)
end

function response(status, headers, body)
  local next_token = body:match('"refresh_token":"([^"]+)"')
  if next_token then
    tail = tail + 1
    queue[tail] = next_token
  end
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  io.write(string.format("%.1f/s; p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d refreshes, %d refused, %d socket errors)\n",
    (summary.requests - summary.errors.status) / seconds,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    summary.requests - summary.errors.status, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
