#!/usr/bin/env bash
# scenario_partition.sh — a network partition between one worker and
# PostgreSQL.
# Injected: worker p runs in its own network namespace, joined to the host by
# a veth pair, and reaches a private PostgreSQL over it; in the middle of the
# run the link goes down (p's packets go nowhere, its connections hang, its
# leases run out); the reaper hands p's jobs on and worker w2 (on the host)
# finishes them; then the link comes back, p's late reports arrive and must
# be refused. The history checker then proves no job ran under two live
# leases, none is lost and none completed twice.
# Needs root, iproute2 and a kernel that allows network namespaces; else it
# says "SKIPPED: why" and exits 77.
# Short: 200 jobs, one 6 s cut; soak: 2,000 jobs, five cuts.
source "$(dirname "$0")/lib.sh"
scen_init partition
n=200 cuts=1
[ "$SOAK" = 1 ] && n=2000 cuts=5

[ "$(id -u)" -eq 0 ] || skip "network namespaces need root (running as uid $(id -u))"
command -v ip >/dev/null || skip "ip (iproute2) is not installed"
NS=jobd-part-$$
HOSTIF=vjp$$a NSIF=vjp$$b
NET=10.213.$((RANDOM % 250)).
ip netns add "$NS" 2>"$WORK/netns.err" || skip "cannot create a network namespace: $(cat "$WORK/netns.err")"
netns_cleanup() {
    ip link del "$HOSTIF" 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
}
trap 'netns_cleanup; scen_cleanup' EXIT
ip link add "$HOSTIF" type veth peer name "$NSIF" 2>"$WORK/netns.err" ||
    skip "cannot create a veth pair: $(cat "$WORK/netns.err")"
ip link set "$NSIF" netns "$NS"
ip addr add "${NET}1/30" dev "$HOSTIF"
ip link set "$HOSTIF" up
ip netns exec "$NS" ip addr add "${NET}2/30" dev "$NSIF"
ip netns exec "$NS" ip link set "$NSIF" up
ip netns exec "$NS" ip link set lo up
log "namespace $NS: worker side ${NET}2 ($NSIF), host side ${NET}1 ($HOSTIF)"

PG_HBA_EXTRA="host all all ${NET}0/30 trust"
pg_private_start "${NET}1"
NS_DB_URL="postgresql://jobd@${NET}1:$PRIV_PG_PORT/postgres"
reach() { ip netns exec "$NS" psql -qXAt "$NS_DB_URL" -c 'SELECT 1'; }
wait_until 20 "PostgreSQL to answer from inside the namespace" reach

start_server
write_worker_ini "$WORK/worker.ini" 2s 500ms 4 "poll_interval = 500ms"
submit_batch "$n" 300
# p runs in the namespace: its database is only reachable over the veth.
SCEN_WORKER=p ip netns exec "$NS" "$JOBD_BIN" worker --config "$WORK/worker.ini" --id p \
    --db "$NS_DB_URL" >"$WORK/worker-p.log" 2>&1 &
WPID[p]=$!
SCEN_PIDS_ALL+=("$!")
log "worker p pid ${WPID[p]} (in $NS)"
start_worker w2 "$WORK/worker.ini"

held_by_p() { [ "$(pg_count "status = 'running' AND worker_id = 'p'")" -gt 0 ]; }
for c in $(seq 1 "$cuts"); do
    at=$((c * n / (cuts + 1)))
    enough() { [ "$(pg_count "status = 'succeeded'")" -ge "$at" ]; }
    wait_until 300 "$at jobs to succeed" enough
    wait_until 30 "p to hold a job" held_by_p
    held=$(pg_count "status = 'running' AND worker_id = 'p'")
    ip link set "$HOSTIF" down
    log "cut $c: link to p down; p holds $held job(s)"
    # p's leases run out, the reaper hands them on, w2 finishes them.
    reaped_all() { [ "$(pg_count "status = 'running' AND worker_id = 'p'")" = 0 ]; }
    wait_until 60 "p's leases to be reaped" reaped_all
    sleep 3
    ip link set "$HOSTIF" up
    log "cut $c: link healed"
done
kill -0 "${WPID[p]}" 2>/dev/null || fail "worker p died"

all_done() { [ "$(pg_count "status = 'succeeded'")" -ge "$n" ]; }
wait_until $((SOAK == 1 ? 1200 : 180)) "all $n jobs to succeed" all_done
# p must be back: it finds work again after the heal.
submit_batch 20 0
n=$((n + 20))
wait_until 120 "the 20 jobs after the heal to succeed" all_done
stop_pid "${WPID[p]}"; stop_pid "${WPID[w2]}"
runs=$(wc -l <"$HISTORY")
log "jobs $n, runs $runs (p: $(awk '$3 == "p"' "$HISTORY" | wc -l), w2: $(awk '$3 == "w2"' "$HISTORY" | wc -l))"
pg_dump_jobs "$WORK/jobs.json"
check_history --expect "$WORK/expect" || fail "the history checker found violations"
[ "$runs" -gt "$n" ] || fail "no job was re-run: the partition did not hit a job in flight"
log "ok: $cuts partition(s) of worker p; $n jobs, $runs runs, checker clean"
