-- bench/sql/gates/schema_pg.sql — the gate data model of issue 29 on
-- PostgreSQL, a prototype applied on top of jobd's schema 37 (`jobd migrate`)
-- in a throwaway database (docs/DESIGN.md, Dependencies, "Gates, measured").
--
-- A child is enqueued into jobd.jobs as a pending row that names a gate: the
-- set of parents it was enqueued after (one gate per parent set and enqueue
-- batch). The gate counts its parents not yet ended; the parents' ends
-- decrement it (one row written per gate and completion statement, whatever
-- the number of children); the children are claimable once it reads 0.
-- Gated rows stay out of the claim indexes of ungated jobs (their predicates
-- gain "gate IS NULL"), so a claim never walks a closed gate's children; an
-- open gate's children are reached through jobs_gated_claim, one walk per
-- open gate (claim_gate in bench/sql/gates.py). The claim clears the row's
-- gate (it rewrites the row anyway), so an open gate whose children are all
-- claimed has no row left and is retired by a sweep.
\set ON_ERROR_STOP on
CREATE TABLE jobd.gates (
    id bigint PRIMARY KEY,
    waiting int NOT NULL CHECK (waiting >= 0),  -- parents not yet ended
    children int NOT NULL DEFAULT 0             -- rows naming it (what counts move on opening)
);
-- the open gates, which every claim reads first: a handful at any time
CREATE INDEX gates_open ON jobd.gates (id) WHERE waiting = 0;
-- which gates a parent's end decrements: one row per (parent, gate), not per child
CREATE TABLE jobd.gate_parents (parent bigint NOT NULL, gate bigint NOT NULL,
                                PRIMARY KEY (parent, gate));
ALTER TABLE jobd.jobs ADD COLUMN gate bigint;

-- the claim walks: gated rows out
DROP INDEX jobd.jobs_claim_type;
CREATE INDEX jobs_claim_type ON jobd.jobs (type, priority DESC, run_at, id)
    WHERE status NOT IN ('running', 'succeeded') AND gate IS NULL;
DROP INDEX jobd.jobs_claim_queue;
CREATE INDEX jobs_claim_queue ON jobd.jobs (queue, priority DESC, run_at, id)
    WHERE status = 'pending' AND gate IS NULL;
DROP INDEX jobd.jobs_group_claim;
CREATE INDEX jobs_group_claim ON jobd.jobs (queue, COALESCE(grp, ''), priority DESC, run_at, id)
    WHERE status NOT IN ('running', 'succeeded') AND gate IS NULL;
DROP INDEX jobd.jobs_next_type;
CREATE INDEX jobs_next_type ON jobd.jobs (type, run_at)
    WHERE status NOT IN ('running', 'succeeded') AND gate IS NULL;
-- and their own walk, per gate (a gate's children, in claim order per type)
CREATE INDEX jobs_gated_claim ON jobd.jobs (gate, type, priority DESC, run_at, id)
    WHERE status NOT IN ('running', 'succeeded') AND gate IS NOT NULL;

-- A parent's success decrements its gates, per completion statement (as
-- jobs_deps_succeeded ends edges today). Its gate_parents rows are consumed
-- (deleted) as they are counted, so a later UPDATE of the succeeded row
-- cannot count it twice; a first version that compared old_rows with
-- new_rows instead joined the two transition tables by a nested loop
-- (1.4 ms a batch of 100: the planner assumes one row in each).
CREATE FUNCTION jobd.gates_parents_succeeded() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    opened int;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.has_children AND n.status = 'succeeded') THEN
        RETURN NULL;
    END IF;
    WITH d AS (DELETE FROM jobd.gate_parents gp
                WHERE gp.parent = ANY(ARRAY(SELECT r.id FROM new_rows r
                                             WHERE r.has_children AND r.status = 'succeeded'))
            RETURNING gp.gate),
         c AS (SELECT gate, count(*)::int AS n FROM d GROUP BY gate),
         l AS (SELECT g.id FROM jobd.gates g WHERE g.id IN (SELECT gate FROM c) ORDER BY g.id
                  FOR NO KEY UPDATE),   -- gates locked in id order: no deadlock
         u AS (UPDATE jobd.gates g SET waiting = g.waiting - c.n FROM c, l
                WHERE g.id = c.gate AND l.id = c.gate RETURNING g.waiting)
    SELECT count(*) FILTER (WHERE waiting = 0) INTO opened FROM u;
    IF opened > 0 THEN
        PERFORM pg_notify('jobd_jobs', 'default');  -- as a row turning pending does
    END IF;
    RETURN NULL;
END $$;
DROP TRIGGER jobs_deps_succeeded ON jobd.jobs;
CREATE TRIGGER jobs_gates_succeeded AFTER UPDATE ON jobd.jobs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION jobd.gates_parents_succeeded();

-- Readers: a gated row reads 'waiting' while its gate is closed.
CREATE FUNCTION jobd.gate_status(st text, g bigint) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN g IS NOT NULL AND st = 'pending'
                 AND EXISTS (SELECT 1 FROM jobd.gates x WHERE x.id = g AND x.waiting > 0)
                THEN 'waiting' ELSE st END $$;
