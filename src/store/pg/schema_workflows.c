/*
 * pg/schema_workflows.c — schema version 26 of pg/schema.c, workflows
 * (docs/MODEL.md, Workflows; pg/workflow.c), in a file of its own as
 * pg/schema_deps.c is. Like every migration step, never edited once
 * released; a change is a new step.
 *
 * A step's workflow and ref live in workflow_steps, keyed by its job, not
 * in columns of the job tables: no statement that moves a job between
 * jobs, jobs_done and jobs_waiting has to carry them, and a job outside
 * any workflow costs nothing. ord is the step's place in the request, the
 * order a read gives the steps in.
 */
#include "store/pg/internal.h"

const char pg_step_workflows[] =
    "CREATE TABLE jobd.workflows (\n"
    "    id              bigserial PRIMARY KEY,\n"
    "    name            text NOT NULL,\n"
    "    idempotency_key text UNIQUE,\n"
    "    created_at      timestamptz NOT NULL\n"
    ");\n"
    "CREATE TABLE jobd.workflow_steps (\n"
    "    job_id   bigint PRIMARY KEY,\n"
    "    workflow bigint NOT NULL,\n"
    "    ref      text NOT NULL,\n"
    "    ord      integer NOT NULL,\n"
    "    UNIQUE (workflow, ref)\n"
    ");\n"
    "CREATE INDEX workflow_steps_ord ON jobd.workflow_steps (workflow, ord);\n";
