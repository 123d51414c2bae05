// bench/clients/enqueue1.mjs URL CONNECTIONS SECONDS — one job per POST /v1/jobs
// from an ordinary Node client: the built-in fetch (undici, keep-alive by
// default), CONNECTIONS loops in flight at once, each sending the next
// request when its 201 is in, for SECONDS. What a user's Node service can
// expect. Prints the line bench/wrk.sh reads:
// WRK requests= duration_us= errors= non201= lat_mean_us= lat_p50_us= lat_p99_us=
const [url, connsArg, secsArg] = process.argv.slice(2);
if (!url || !connsArg || !secsArg) {
    console.error("usage: enqueue1.mjs URL CONNECTIONS SECONDS");
    process.exit(2);
}
const body = JSON.stringify({ type: "noop", payload: { n: 1 } });
const lat = [];
let bad = 0, errors = 0;
const t0 = performance.now();
const until = t0 + Number(secsArg) * 1000;

async function loop() {
    while (performance.now() < until) {
        const s = performance.now();
        try {
            const r = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body });
            await r.arrayBuffer();
            lat.push(performance.now() - s);
            if (r.status !== 201) bad++;
        } catch {
            errors++;
        }
    }
}

await Promise.all(Array.from({ length: Number(connsArg) }, loop));
const dur = performance.now() - t0;
lat.sort((a, b) => a - b);
const pct = (p) => (lat.length ? Math.round(lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] * 1000) : 0);
const mean = lat.length ? (lat.reduce((a, b) => a + b, 0) / lat.length) * 1000 : 0;
console.log(`WRK requests=${lat.length} duration_us=${Math.round(dur * 1000)} errors=${errors} ` +
    `non201=${bad} lat_mean_us=${mean.toFixed(1)} lat_p50_us=${pct(50)} lat_p99_us=${pct(99)}`);
