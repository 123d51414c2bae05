#!/usr/bin/env bash
# scenario_patroni_switchover.sh — a planned switchover under load: two
# PostgreSQL 15 nodes under Patroni in synchronous mode with one etcd (all
# on loopback), two `jobd server`s and three workers on the multi-host URL
# (target_session_attrs=read-write), a client enqueueing through both
# servers all along and recording every acknowledged job. `patronictl
# switchover` moves the primary; servers and workers must reconnect by
# themselves, processing must resume within 15 s of the promotion, /healthz
# must show the outage and the return, and every acknowledged job must
# succeed exactly once with no overlapping runs (history checker; reports
# from before the switchover are accepted or fenced by attempt).
# Short: 1 switchover; soak: 3 (back and forth). See ha_lib.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ha_lib.sh"
scen_init patroni_switchover
ha_failover_run switchover
log "ok: switchover under load"
