/*
 * lease.pml — a Promela model of jobd's claim / lease / fencing protocol,
 * checked with spin (tests/integration/test_model.sh runs it in make test).
 *
 * One job, NW workers, a reaper, an operator who may cancel and retry, a
 * clock that may let any lease run out at any moment, and reports that
 * travel through a channel, so they can be delayed past a reap and a
 * re-claim (a zombie's late report). Each store step is one atomic block,
 * as each is one conditional statement in the store; the comment on each
 * names the C function it mirrors (src/store/store.h, both backends).
 *
 * Checked:
 *   safe      never two workers holding a live lease on the job (same
 *             attempt, status running) — at most one can commit;
 *   final     a terminal status changes only by a manual retry (asserts);
 *   once      the job succeeds at most once;
 *   ends      when the system comes to rest the job is terminal (no job
 *             is lost, none is stuck running).
 */

#define NW 2            /* workers */
#define MAX_ATTEMPTS 2
#define MAX_RETRIES 1   /* manual retries the operator may do */

mtype = { PENDING, RUNNING, SUCCEEDED, DEAD, CANCELLED };
mtype = { COMPLETE, FAIL, HEARTBEAT };

/* The store's row. */
mtype status = PENDING;
byte attempt = 0;        /* fencing token: only grows */
byte attempt_floor = 0;  /* attempts used before the last manual retry */
bool lease_live = false; /* lease_expires_at > now */
bool cancel_req = false;

/* Ghosts for the properties. */
byte successes = 0;
byte retries = 0;
bool holding[NW];        /* worker believes it holds the job ... */
byte held[NW];           /* ... with this attempt */

chan reports = [2] of { mtype, byte, byte };  /* kind, worker, attempt */

#define terminal(s) (s == SUCCEEDED || s == DEAD || s == CANCELLED)
#define live(w) (holding[w] && held[w] == attempt && status == RUNNING && lease_live)

/* A failed attempt: store_fail / the reaper's rule. */
inline fail_attempt() {
    if
    :: cancel_req -> status = CANCELLED
    :: else ->
        if
        :: attempt - attempt_floor < MAX_ATTEMPTS -> status = PENDING
        :: else -> status = DEAD
        fi
    fi;
    lease_live = false
}

proctype worker(byte me) {
    byte a, beats;
end_idle:
    do
    :: atomic {   /* store_claim: pending and due -> running, attempt + 1 */
        status == PENDING && !holding[me] ->
        status = RUNNING; attempt++; lease_live = true; cancel_req = false;
        holding[me] = true; held[me] = attempt; a = attempt
       }
       beats = 0;
       do   /* a handler's run is bounded by its timeout: finitely many heartbeats */
       :: beats < 1 -> reports ! HEARTBEAT, me, a; beats++   /* store_heartbeat */
       :: reports ! COMPLETE, me, a; break    /* store_complete */
       :: reports ! FAIL, me, a; break        /* store_fail */
       :: break                               /* the worker dies: kill -9 */
       od;
       atomic { holding[me] = false; held[me] = 0; a = 0; beats = 0 }
    od
}

/* Applies reports in arrival order, each with the fencing predicate. */
active proctype store() {
    mtype kind; byte w, a;
end_serve:
    do
    :: reports ? kind, w, a ->
       atomic {
        if
        :: status == RUNNING && attempt == a ->   /* status = running AND attempt = $a */
            assert(!terminal(status));
            assert(a == attempt);   /* only the live attempt's report changes the row */
            if
            :: kind == HEARTBEAT -> lease_live = true
            :: kind == COMPLETE -> status = SUCCEEDED; lease_live = false; successes++
            :: kind == FAIL -> fail_attempt()
            fi
        :: else -> skip                            /* stale: JOBD_E_STALE, nothing changes */
        fi
       }
    od
}

/* Time passes: any live lease may run out when its heartbeat is late. */
active proctype clock() {
end_tick:
    do
    :: atomic { lease_live && status == RUNNING -> lease_live = false }
    od
}

/* store_reap: running AND lease expired -> a failed attempt. */
active proctype reaper() {
end_reap:
    do
    :: atomic { status == RUNNING && !lease_live -> assert(!terminal(status)); fail_attempt() }
    od
}

/* store_cancel and store_retry. */
active proctype operator() {
    do
    :: atomic { status == PENDING -> status = CANCELLED }          /* cancel pending */
    :: atomic { status == RUNNING -> cancel_req = true }            /* cancel running */
    :: atomic { (status == DEAD || status == CANCELLED) && retries < MAX_RETRIES ->
                status = PENDING; attempt_floor = attempt; cancel_req = false; retries++ }
    :: retries >= MAX_RETRIES -> break
    :: timeout -> break
    od
}

init {
    byte i;
    atomic { for (i : 0 .. NW - 1) { run worker(i) } }
}

/* safe and once, checked in every reachable state (plain safety run). */
active proctype monitor() {
end_watch:
    atomic { (live(0) && live(1)) || successes > 1 -> assert(false) }
}

/*
 * ends: when nothing can move any more (every worker idle or dead, no report
 * in flight, nothing for the reaper), the job must be terminal: it was not
 * lost and is not stuck running. Runs are finite (bounded attempts,
 * heartbeats and retries), so every run reaches such a state.
 */
active proctype quiescence() {
    timeout -> assert(terminal(status) && len(reports) == 0)
}
