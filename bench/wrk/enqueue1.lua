-- bench/wrk/enqueue1.lua — wrk script: one job per POST /v1/jobs (bench/wrk.sh).
-- Every request enqueues one no-op job; a response other than 201 is counted
-- and reported, so a run that measured errors says so. Each wrk thread has
-- its own Lua state: `bad` is a global of each thread's state, summed in
-- done() through the thread objects setup() kept.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"type":"noop","payload":{"n":1}}'

local threads = {}
function setup(thread)
    table.insert(threads, thread)
end

bad = 0
function response(status, headers, body)
    if status ~= 201 then
        bad = bad + 1
    end
end

function done(summary, latency, requests)
    local non201 = 0
    for _, t in ipairs(threads) do
        non201 = non201 + (t:get("bad") or 0)
    end
    io.write(string.format("WRK requests=%d duration_us=%d errors=%d non201=%d "
                           .. "lat_mean_us=%.1f lat_p50_us=%d lat_p99_us=%d\n",
        summary.requests, summary.duration,
        summary.errors.connect + summary.errors.read + summary.errors.write
            + summary.errors.timeout,
        non201, latency.mean, latency:percentile(50), latency:percentile(99)))
end
