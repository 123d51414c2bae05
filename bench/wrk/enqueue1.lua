-- bench/wrk/enqueue1.lua — wrk script: one job per POST /v1/jobs (bench/wrk.sh).
-- Every request enqueues one no-op job; a response other than 201 is counted
-- and reported, so a run that measured errors says so.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"type":"noop","payload":{"n":1}}'

local bad = 0
function response(status, headers, body)
    if status ~= 201 then
        bad = bad + 1
    end
end

function done(summary, latency, requests)
    io.write(string.format("WRK requests=%d duration_us=%d errors=%d non201=%d "
                           .. "lat_mean_us=%.1f lat_p50_us=%d lat_p99_us=%d\n",
        summary.requests, summary.duration,
        summary.errors.connect + summary.errors.read + summary.errors.write
            + summary.errors.status + summary.errors.timeout,
        bad, latency.mean, latency:percentile(50), latency:percentile(99)))
end
