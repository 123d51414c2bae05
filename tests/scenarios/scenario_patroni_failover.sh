#!/usr/bin/env bash
# scenario_patroni_failover.sh — an unplanned failover under load: as
# scenario_patroni_switchover, but the event is kill -9 of the primary's
# postmaster. Patroni (primary_start_timeout 0) fails over to the
# synchronous standby instead of restarting the crashed primary, which then
# rejoins as the standby (pg_rewind). Every acknowledged job must still
# exist and succeed exactly once: synchronous replication
# (synchronous_commit = on with a synchronous standby) is what makes an
# acknowledged enqueue survive the loss of the primary.
# Short: 1 failover; soak: 3. See ha_lib.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ha_lib.sh"
scen_init patroni_failover
ha_failover_run kill
log "ok: failover after kill -9 of the primary under load"
