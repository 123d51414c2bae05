/*
 * deps.pml — a Promela model of jobd's dependencies (docs/MODEL.md,
 * Dependencies), checked with spin (tests/integration/test_model.sh runs it
 * in make test; docs/CHECKING.md, Model checking).
 *
 * Three jobs: two parents (P0, P1) and a child (C) that waits for both,
 * with an on_parent_failure chosen at the start (cancel or run). Two
 * workers claim whichever job is pending, and each run ends in a
 * completion, a failure (retried while attempts are left, else dead) or a
 * crash of the worker (kill -9: nothing is reported). A clock lets any
 * lease run out; the reaper turns an expired lease into a failed attempt.
 * An operator may cancel a job and retry a dead or cancelled parent by hand
 * (which puts the child back to waiting if it was cancelled for that
 * parent). Reports are fenced by the attempt, as in lease.pml, which proves
 * the fencing itself; here a report may arrive after its lease was reaped
 * and the job claimed again, and must then change nothing.
 *
 * The release: each store step is one atomic block, and the child's release
 * (settle, jobd.deps_settle on PostgreSQL, parent_ended in sqlite/deps.c)
 * is inside the block that ends a parent, as the store runs it inside the
 * statement (a trigger) or transaction that ends the parent.
 *
 * Checked:
 *   early     the child is never claimed before both parents are terminal
 *             (assert at its claim; a parent retried by hand after the
 *             child was released with on_parent_failure run is the one
 *             allowed exception), and it is released (waiting -> pending)
 *             at most once;
 *   stuck     when the system comes to rest, every job is terminal: in
 *             particular the child is not left waiting once both parents
 *             are terminal (end-state assertion).
 *
 * Compiled with -DRELEASE_LATER, the release is no longer part of the
 * parent's transition: the process that ended the parent (worker, reaper
 * or API server) releases the child in a later step of its own, and may be
 * killed before it. spin then finds runs where the child stays waiting for
 * ever and "stuck" fails: the shortest (12 steps) has the operator cancel
 * both parents through an API server that dies before releasing; with
 * -DMAX_OPS=0 as well (no operator), a worker completes both parents and is
 * killed -9 after the second completion's commit, before the release (18
 * steps). test_model.sh checks both. That is why the store must not release
 * children in a sweep or a transaction after the parent's.
 */

#define NJ 3            /* jobs: 0 and 1 the parents, 2 the child */
#define C 2
#define MAX_ATTEMPTS 2
#ifndef MAX_OPS
#define MAX_OPS 2       /* operator actions (cancels and retries) per run */
#endif

mtype = { WAITING, PENDING, RUNNING, SUCCEEDED, DEAD, CANCELLED };

/* The store's rows. */
mtype status[NJ];
byte attempt[NJ];        /* fencing token: only grows */
byte floor_[NJ];         /* attempts used before the last manual retry */
bool lease_live[NJ];     /* lease_expires_at > now */
bool cancel_req[NJ];
bool run_on_failure;     /* the child's on_parent_failure: run, else cancel */
bool cause[2];           /* the child was cancelled for this parent */

/* Ghosts for the properties. */
byte releases = 0;       /* times the child went waiting -> pending */
bool reopened = false;   /* a parent was retried by hand after the child was released */
byte ops = 0;

#define terminal(s) (s == SUCCEEDED || s == DEAD || s == CANCELLED)
#define parents_ended (terminal(status[0]) && terminal(status[1]))

/*
 * The release (deps_settle): if the child waits and no parent is left to
 * end, it becomes pending when both succeeded, else by on_parent_failure
 * pending or cancelled for the first parent that did not succeed.
 */
inline settle() {
    if
    :: status[C] == WAITING && parents_ended ->
        if
        :: status[0] == SUCCEEDED && status[1] == SUCCEEDED || run_on_failure ->
            status[C] = PENDING; releases++
        :: else ->
            status[C] = CANCELLED;
            if
            :: status[0] != SUCCEEDED -> cause[0] = true
            :: else -> cause[1] = true
            fi
        fi
    :: else -> skip
    fi
}

#ifdef RELEASE_LATER
/* The broken design: the end of a parent only ends it ... */
#define RELEASE_NOW(j) skip
/* ... and its process releases the child afterwards, unless it dies first. */
inline release_later() {
    if
    :: atomic { settle() }
    :: skip   /* killed between the two steps */
    fi
}
#else
/* As the store does it: within the parent's terminal transition. */
#define RELEASE_NOW(j) if :: j != C -> settle() :: else -> skip fi
inline release_later() { skip }
#endif

/* A failed attempt of job j: store_fail and the reaper's rule. */
inline fail_attempt(j) {
    lease_live[j] = false;
    if
    :: cancel_req[j] -> status[j] = CANCELLED; RELEASE_NOW(j)
    :: else ->
        if
        :: attempt[j] - floor_[j] < MAX_ATTEMPTS -> status[j] = PENDING
        :: else -> status[j] = DEAD; RELEASE_NOW(j)
        fi
    fi
}

/* store_claim of job j if pending: running, attempt + 1. */
#define CLAIM(x) \
    atomic { status[x] == PENDING -> \
        j = x; status[j] = RUNNING; attempt[j]++; lease_live[j] = true; cancel_req[j] = false; \
        a = attempt[j]; \
        assert(j != C || (parents_ended || reopened)); /* early */ \
        assert(releases <= 1) }

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
       :: skip -> atomic {   /* store_complete: status = running AND attempt = a */
            if
            :: status[j] == RUNNING && attempt[j] == a ->
                status[j] = SUCCEEDED; lease_live[j] = false; RELEASE_NOW(j)
            :: else -> skip   /* stale */
            fi
          };
          release_later()
       :: skip -> atomic {   /* store_fail, the same fence */
            if
            :: status[j] == RUNNING && attempt[j] == a -> fail_attempt(j)
            :: else -> skip
            fi
          };
          release_later()
       :: skip       /* the worker is killed: nothing reported; restarted */
       fi;
       atomic { j = 0; a = 0 }
    od
}

/* Time passes: any live lease may run out when its heartbeat is late. */
#define EXPIRE(x) atomic { status[x] == RUNNING && lease_live[x] -> lease_live[x] = false }
active proctype clock() {
end_tick:
    do
    :: EXPIRE(0)
    :: EXPIRE(1)
    :: EXPIRE(C)
    od
}

/* store_reap: running AND lease expired -> a failed attempt. */
#define REAP(x) atomic { status[x] == RUNNING && !lease_live[x] -> fail_attempt(x) }; release_later()
active proctype reaper() {
end_reap:
    do
    :: REAP(0)
    :: REAP(1)
    :: REAP(C)
    od
}

/* store_cancel of a pending or waiting job, and of a running one (its
 * next failure or reap ends it cancelled). */
#define CANCEL(x) \
    atomic { ops < MAX_OPS && (status[x] == PENDING || status[x] == WAITING) -> \
             status[x] = CANCELLED; ops++; RELEASE_NOW(x) }; \
    release_later()
#define CANCEL_RUNNING(x) \
    atomic { ops < MAX_OPS && status[x] == RUNNING && !cancel_req[x] -> cancel_req[x] = true; ops++ }
/* store_retry of a dead or cancelled parent: fresh attempts, and the child
 * waits again if it was cancelled for this parent (jobd.deps_parent_reopened). */
#define RETRY(x) \
    atomic { ops < MAX_OPS && (status[x] == DEAD || status[x] == CANCELLED) -> \
             status[x] = PENDING; floor_[x] = attempt[x]; cancel_req[x] = false; ops++; \
             if \
             :: cause[x] && status[C] == CANCELLED -> status[C] = WAITING; cause[x] = false \
             :: else -> reopened = reopened || status[C] != WAITING \
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
        status[0] = PENDING; status[1] = PENDING; status[C] = WAITING;
        if
        :: run_on_failure = true
        :: run_on_failure = false
        fi;
        run worker(); run worker()   /* two workers */
    }
}

/*
 * stuck: when nothing can move any more (workers idle, nothing for the
 * reaper, the operator done), every job is terminal: the child was not
 * left waiting once its parents ended, and nothing is stuck running.
 */
active proctype quiescence() {
    timeout -> assert(terminal(status[0]) && terminal(status[1]) && terminal(status[C]))
}
