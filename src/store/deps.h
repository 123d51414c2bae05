/*
 * deps.h — the parents of jobs (docs/MODEL.md, Dependencies), as the job
 * object shows them: depends_on and on_parent_failure.
 *
 * The SQL is in pg/deps.c and sqlite/deps.c; the release of waiting jobs
 * happens inside the stores' own statements (their schemas' triggers), not
 * here. The remote store has none of it.
 */
#ifndef JOBD_STORE_DEPS_H
#define JOBD_STORE_DEPS_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/*
 * Fills v[i].depends_on / n_depends_on / run_on_parent_failure and
 * workflow / step (store/workflow.h) of the n jobs (ids as stored) from
 * the store, replacing what they held; the arrays and strings are owned by
 * the jobs (job_fini). A backend without dependencies
 * leaves them empty. JOBD_E_NOMEM or the store's error; on error the jobs
 * keep whatever was filled.
 */
JOBD_MUST_USE int store_deps_attach(struct store *st, struct job *v, size_t n,
                                    struct jobd_error *err);

/*
 * For backends: adds parent to the job of v whose id is child (the rows of
 * one child in ascending parent order). JOBD_E_NOMEM.
 */
int store_deps_add(struct job *v, size_t n, int64_t child, int64_t parent, bool run);

/*
 * Copies sp's parents (sorted, without repeats) and policy onto j, as an
 * enqueue stored them. JOBD_E_NOMEM.
 */
int store_deps_from_spec(struct job *j, const struct job_spec *sp);

#endif
