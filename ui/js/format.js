// format.js — how times, ages and JSON are shown. Everything returns plain
// strings: the views put them in text nodes.
export function ago(iso, now = Date.now()) {
  if (!iso) return '—';
  const s = Math.round((now - Date.parse(iso)) / 1000);
  return s >= 0 ? `${age(s)} ago` : `in ${age(-s)}`;
}

// A duration in seconds as "42s", "3m 5s", "2h 4m", "3d 1h".
export function age(sec) {
  if (sec === null || sec === undefined) return '—';
  let s = Math.max(0, Math.round(sec));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  s %= 60;
  if (m < 60) return s ? `${m}m ${s}s` : `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

// When a pending job may run, from its run_at: "in 12m" (scheduled for
// later) or "3s late" (due, waiting that long); "—" for a job not pending.
export function runAt(j, now = Date.now()) {
  if (!j || j.status !== 'pending' || !j.run_at) return '—';
  const ms = Date.parse(j.run_at) - now;
  if (Number.isNaN(ms)) return String(j.run_at);
  return ms > 0 ? `in ${age(Math.ceil(ms / 1000))}` : `${age(Math.floor(-ms / 1000))} late`;
}

export function duration(sec) {
  if (sec === null || sec === undefined) return '—';
  if (sec < 1) return `${Math.round(sec * 1000)}ms`;
  if (sec < 60) return `${sec.toFixed(sec < 10 ? 2 : 1)}s`;
  return age(sec);
}

// An instant as "2026-12-03 15:04:05" in zone (default UTC), with the
// zone's abbreviation when it is not UTC.
export function when(iso, zone = 'UTC') {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  try {
    const parts = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit',
      hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
      timeZoneName: zone === 'UTC' ? undefined : 'short',
    }).formatToParts(d);
    const p = Object.fromEntries(parts.map((x) => [x.type, x.value]));
    const base = `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
    return zone === 'UTC' ? `${base} UTC` : `${base} ${p.timeZoneName || zone}`;
  } catch {
    return d.toISOString();
  }
}

export function pretty(value) {
  if (value === undefined || value === null) return 'null';
  return JSON.stringify(value, null, 2);
}

export function num(n) {
  return n === undefined || n === null ? '—' : Number(n).toLocaleString('en-US');
}
