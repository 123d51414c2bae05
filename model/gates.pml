/*
 * gates.pml — model/deps.pml with the gate data model of issue 29, a
 * prototype not built (docs/DESIGN.md, Dependencies, "Gates, measured";
 * bench/sql/gates/schema_pg.sql). Checked by hand, not yet by
 * tests/integration/test_model.sh:
 *
 *     spin -a model/gates.pml && gcc -O2 -w -DSAFETY -DCOLLAPSE -o pan pan.c && ./pan -m100000
 *
 * The same three jobs, workers, clock, reaper and operator as deps.pml.
 * What changes: the child is not moved when its parents end. It is a
 * pending row from the start, naming a gate that counts its parents not
 * yet ended; a claim takes it only when it names no gate or its gate reads
 * 0, and clears the row's gate. A parent's end decrements the gate in the
 * same atomic step (the statement trigger, in the parent's transaction).
 * The last end of a gate whose child has on_parent_failure cancel and a
 * parent that did not succeed cancels the child instead (the failure path
 * writes each child, as today). A manual retry of a parent the child was
 * cancelled for puts the child back behind a fresh gate that counts its
 * parents not terminal at that moment; a retry of a parent whose end a
 * still closed gate counted increments that gate again. (Without that
 * increment spin finds the child claimed while the retried parent runs:
 * P0 dead, counted, retried; P1 succeeds; the gate reads 0.)
 *
 * Checked, as in deps.pml: "early" (the child is never claimed before both
 * parents are terminal, the retried-after-release exception aside; the
 * gate opens for it at most once a life) and "stuck" (at rest every job is
 * terminal). -DCLAIM_IGNORES_GATE (a claim path that does not consult the
 * gate, e.g. one of the limited or grouped walks forgotten) must fail
 * "early"; -DOPEN_LATER (the gate decremented after the parent's
 * transaction, by the process that ended it, which may die first) must
 * fail "stuck".
 */

#define NJ 3            /* jobs: 0 and 1 the parents, 2 the child */
#define C 2
#define MAX_ATTEMPTS 2
#ifndef MAX_OPS
#define MAX_OPS 2
#endif

mtype = { PENDING, RUNNING, SUCCEEDED, DEAD, CANCELLED };

mtype status[NJ];
byte attempt[NJ];
byte floor_[NJ];
bool lease_live[NJ];
bool cancel_req[NJ];
bool run_on_failure;
bool cause[2];           /* the child was cancelled for this parent */

/* The gate: the child's row names it while gated; waiting = parents not ended. */
bool gated;
byte waiting;
bool counted[2];         /* this parent's end was counted by the current gate */

byte opens = 0;          /* ghost: times the gate opened for a gated pending child */
bool reopened = false;
byte ops = 0;

#define terminal(s) (s == SUCCEEDED || s == DEAD || s == CANCELLED)
#define parents_ended (terminal(status[0]) && terminal(status[1]))
#define is_waiting (status[C] == PENDING && gated && waiting > 0)

/*
 * Parent p ended (in its own atomic step): decrement the gate once; at 0,
 * with a parent that did not succeed and on_parent_failure cancel, cancel
 * the child (naming the first such parent) instead of letting it run.
 */
inline gate_end(p) {
    if
    :: gated && !counted[p] && status[C] == PENDING ->
        counted[p] = true; waiting--;
        if
        :: waiting == 0 && !run_on_failure && (status[0] != SUCCEEDED || status[1] != SUCCEEDED) ->
            status[C] = CANCELLED; gated = false;
            if
            :: status[0] != SUCCEEDED -> cause[0] = true
            :: else -> cause[1] = true
            fi
        :: waiting == 0 && !(!run_on_failure && (status[0] != SUCCEEDED || status[1] != SUCCEEDED)) ->
            opens++
        :: else -> skip
        fi
    :: else -> skip
    fi
}

#ifdef OPEN_LATER
#define END_NOW(j) skip
inline end_later(j) {
    if
    :: atomic { if :: j != C -> gate_end(j) :: else -> skip fi }
    :: skip
    fi
}
#else
#define END_NOW(j) if :: j != C -> gate_end(j) :: else -> skip fi
inline end_later(j) { skip }
#endif

inline fail_attempt(j) {
    lease_live[j] = false;
    if
    :: cancel_req[j] -> status[j] = CANCELLED; END_NOW(j)
    :: else ->
        if
        :: attempt[j] - floor_[j] < MAX_ATTEMPTS -> status[j] = PENDING
        :: else -> status[j] = DEAD; END_NOW(j)
        fi
    fi
}

#ifdef CLAIM_IGNORES_GATE
#define CLAIMABLE(x) (status[x] == PENDING)
#else
#define CLAIMABLE(x) (status[x] == PENDING && (x != C || !gated || waiting == 0))
#endif

#define CLAIM(x) \
    atomic { CLAIMABLE(x) -> \
        j = x; status[j] = RUNNING; attempt[j]++; lease_live[j] = true; cancel_req[j] = false; \
        if :: j == C -> gated = false :: else -> skip fi; \
        a = attempt[j]; \
        assert(j != C || (parents_ended || reopened)); /* early */ \
        assert(opens <= 1) }

proctype worker() {
    byte j, a;
end_idle:
    do
    :: if
       :: CLAIM(0)
       :: CLAIM(1)
       :: CLAIM(C)
       fi;
       if
       :: skip -> atomic {
            if
            :: status[j] == RUNNING && attempt[j] == a ->
                status[j] = SUCCEEDED; lease_live[j] = false; END_NOW(j)
            :: else -> skip
            fi
          };
          end_later(j)
       :: skip -> atomic {
            if
            :: status[j] == RUNNING && attempt[j] == a -> fail_attempt(j)
            :: else -> skip
            fi
          };
          end_later(j)
       :: skip
       fi;
       atomic { j = 0; a = 0 }
    od
}

#define EXPIRE(x) atomic { status[x] == RUNNING && lease_live[x] -> lease_live[x] = false }
active proctype clock() {
end_tick:
    do
    :: EXPIRE(0)
    :: EXPIRE(1)
    :: EXPIRE(C)
    od
}

#define REAP(x) atomic { status[x] == RUNNING && !lease_live[x] -> fail_attempt(x) }; end_later(x)
active proctype reaper() {
end_reap:
    do
    :: REAP(0)
    :: REAP(1)
    :: REAP(C)
    od
}

/* A cancel of a pending job, a gated child included (it is pending in its row). */
#define CANCEL(x) \
    atomic { ops < MAX_OPS && status[x] == PENDING -> \
             status[x] = CANCELLED; ops++; \
             if :: x == C -> gated = false :: else -> skip fi; \
             END_NOW(x) }; \
    end_later(x)
#define CANCEL_RUNNING(x) \
    atomic { ops < MAX_OPS && status[x] == RUNNING && !cancel_req[x] -> cancel_req[x] = true; ops++ }
/* A retry of a dead or cancelled parent: the child cancelled for it is
 * pending again behind a fresh gate counting the parents not terminal now;
 * a gate still closed that had counted this parent's end counts it again
 * (the gate reopened: it was never open, so nothing was claimed through
 * it); an open gate's children count as released, as today's released
 * children do (the "reopened" exception). */
#define RETRY(x) \
    atomic { ops < MAX_OPS && (status[x] == DEAD || status[x] == CANCELLED) -> \
             status[x] = PENDING; floor_[x] = attempt[x]; cancel_req[x] = false; ops++; \
             if \
             :: cause[x] && status[C] == CANCELLED -> \
                status[C] = PENDING; cause[x] = false; gated = true; opens = 0; \
                counted[0] = terminal(status[0]); counted[1] = terminal(status[1]); \
                waiting = (counted[0] -> 0 : 1) + (counted[1] -> 0 : 1) \
             :: is_waiting && counted[x] -> counted[x] = false; waiting++ \
             :: else -> reopened = reopened || !is_waiting \
             fi }
active proctype operator() {
end_op:
    do
    :: CANCEL(0)
    :: CANCEL(1)
    :: CANCEL(C)
    :: CANCEL_RUNNING(0)
    :: CANCEL_RUNNING(1)
    :: CANCEL_RUNNING(C)
    :: RETRY(0)
    :: RETRY(1)
    od
}

init {
    atomic {
        status[0] = PENDING; status[1] = PENDING; status[C] = PENDING;
        gated = true; waiting = 2;
        if
        :: run_on_failure = true
        :: run_on_failure = false
        fi;
        run worker(); run worker()
    }
}

active proctype quiescence() {
    timeout -> assert(terminal(status[0]) && terminal(status[1]) && terminal(status[C]))
}
