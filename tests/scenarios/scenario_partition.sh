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
# says why and cuts a userspace TCP forwarder (tcp_forward.py) between p and
# PostgreSQL instead. SCEN_PARTITION=netns (skip with 77 and the reason when
# not possible) or =forwarder forces one way.
# The link comes back once p's jobs have been reaped and finished
# elsewhere (by w2; or by p, had its report got through just before the
# cut), so every late report of p's arrives after the job's completion was
# accepted. Short: 100 jobs, one cut; soak: 2,000 jobs, five cuts.
source "$(dirname "$0")/lib.sh"
scen_init partition
n=100 cuts=1
[ "$SOAK" = 1 ] && n=2000 cuts=5

# netns_setup: a namespace and veth pair, and a private cluster listening on
# the host's end; sets NS_DB_URL and P_EXEC. Returns 1 with the reason in
# $WORK/netns.why when the machine does not allow it.
NS=jobd-part-$$ HOSTIF=vjp$$a NSIF=vjp$$b NET=10.213.$((RANDOM % 250)).
netns_cleanup() {
    ip link del "$HOSTIF" 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
}
netns_setup() {
    [ "$(id -u)" -eq 0 ] || { echo "network namespaces need root (running as uid $(id -u))" >"$WORK/netns.why"; return 1; }
    command -v ip >/dev/null || { echo "ip (iproute2) is not installed" >"$WORK/netns.why"; return 1; }
    ip netns add "$NS" 2>"$WORK/netns.err" ||
        { echo "cannot create a network namespace: $(cat "$WORK/netns.err")" >"$WORK/netns.why"; return 1; }
    trap 'netns_cleanup; scen_cleanup' EXIT
    if ! ip link add "$HOSTIF" type veth peer name "$NSIF" 2>"$WORK/netns.err"; then
        echo "cannot create a veth pair: $(cat "$WORK/netns.err")" >"$WORK/netns.why"
        netns_cleanup
        return 1
    fi
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
    P_EXEC=(ip netns exec "$NS")
    reach() { ip netns exec "$NS" psql -qXAt "$NS_DB_URL" -c 'SELECT 1'; }
    wait_until 20 "PostgreSQL to answer from inside the namespace" reach
}
net_cut()  { if [ "$MODE" = netns ]; then ip link set "$HOSTIF" down; else kill -USR1 "$FWD_PID"; fi; }
net_heal() { if [ "$MODE" = netns ]; then ip link set "$HOSTIF" up; else kill -USR2 "$FWD_PID"; fi; }

# forwarder_setup: the fallback, p reaches PostgreSQL through tcp_forward.py.
forwarder_setup() {
    pg_newdb
    start_forwarder
    NS_DB_URL=$FWD_DB_URL
    P_EXEC=()
}

# SCEN_PARTITION=netns|forwarder forces a mode; by default netns when the
# machine allows it, else the forwarder, saying why.
MODE=${SCEN_PARTITION:-auto}
case $MODE in
    netns) netns_setup || skip "$(cat "$WORK/netns.why")" ;;
    forwarder) forwarder_setup ;;
    auto)
        if netns_setup; then MODE=netns
        else
            log "network namespaces unavailable ($(cat "$WORK/netns.why")): cutting a userspace TCP forwarder instead"
            MODE=forwarder
            forwarder_setup
        fi ;;
    *) fail "SCEN_PARTITION must be netns or forwarder, not $MODE" ;;
esac
log "partition mode: $MODE"

start_server
write_worker_ini "$WORK/worker.ini" 2s 500ms 4 "poll_interval = 500ms"
submit_batch "$n" 300
# p reaches its database only over the link that will be cut.
SCEN_WORKER=p "${P_EXEC[@]}" "$JOBD_BIN" worker --config "$WORK/worker.ini" --id p \
    --db "$NS_DB_URL" >"$WORK/worker-p.log" 2>&1 &
WPID[p]=$!
SCEN_PIDS_ALL+=("$!")
log "worker p pid ${WPID[p]} ($MODE)"
start_worker w2 "$WORK/worker.ini"

held_by_p() { [ "$(pg_count "status = 'running' AND worker_id = 'p'")" -gt 0 ]; }
for c in $(seq 1 "$cuts"); do
    at=$((c * n / (cuts + 1)))
    enough() { [ "$(pg_count "status = 'succeeded'")" -ge "$at" ]; }
    wait_until 300 "$at jobs to succeed" enough
    wait_until 30 "p to hold a job" held_by_p
    held=$(pg_sql "SELECT string_agg(id::text, ',') FROM jobd.all_jobs WHERE status = 'running' AND worker_id = 'p'")
    net_cut
    log "cut $c: link to p down ($MODE); p holds job(s) ${held:-none}"
    # p's leases run out, the reaper hands them on, w2 finishes them.
    reaped_all() { [ "$(pg_count "status = 'running' AND worker_id = 'p'")" = 0 ]; }
    wait_until 60 "p's leases to be reaped" reaped_all
    finished_held() { [ -z "$held" ] || pg_count_is "id IN ($held) AND status <> 'succeeded'" 0; }
    wait_until 60 "p's jobs ($held) to be finished elsewhere" finished_held
    net_heal
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
