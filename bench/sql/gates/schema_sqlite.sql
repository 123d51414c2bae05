-- bench/sql/gates/schema_sqlite.sql — the gate data model of issue 29 on
-- SQLite, a prototype applied on top of jobd's schema 25 (`jobd migrate`) in
-- a copy of a database file (docs/DESIGN.md, Dependencies, "Gates,
-- measured"); bench/sql/gates/schema_pg.sql is the PostgreSQL side and says
-- what a gate is. Here the gate's decrement is a row trigger on jobs_done
-- (every end of a job is its insert there, as for job_deps today), so no
-- deps_todo row and no flush before COMMIT; a gate's opening moves its
-- children's count from waiting to pending in job_counts in one statement.
CREATE TABLE gates (
  id INTEGER PRIMARY KEY,
  waiting INTEGER NOT NULL CHECK (waiting >= 0),
  queue TEXT NOT NULL,           -- the prototype's gates hold one queue's children
  children INTEGER NOT NULL DEFAULT 0);
CREATE INDEX gates_open ON gates (id) WHERE waiting = 0;
CREATE TABLE gate_parents (parent INTEGER NOT NULL, gate INTEGER NOT NULL,
  PRIMARY KEY (parent, gate)) WITHOUT ROWID;
ALTER TABLE jobs ADD COLUMN gate INTEGER;

DROP INDEX jobs_claim_queue;
CREATE INDEX jobs_claim_queue ON jobs (queue, priority DESC, run_at, id)
  WHERE status = 'pending' AND gate IS NULL;
DROP INDEX jobs_claim_any;
CREATE INDEX jobs_claim_any ON jobs (priority DESC, run_at, id) WHERE status = 'pending' AND gate IS NULL;
DROP INDEX jobs_next_run;
CREATE INDEX jobs_next_run ON jobs (run_at) WHERE status = 'pending' AND gate IS NULL;
DROP INDEX jobs_claim_type;
CREATE INDEX jobs_claim_type ON jobs (type, priority DESC, run_at, id)
  WHERE status = 'pending' AND gate IS NULL;
DROP INDEX jobs_next_type;
CREATE INDEX jobs_next_type ON jobs (type, run_at) WHERE status = 'pending' AND gate IS NULL;
DROP INDEX jobs_next_queue;
CREATE INDEX jobs_next_queue ON jobs (queue, run_at) WHERE status = 'pending' AND gate IS NULL;
DROP INDEX jobs_group_claim;
CREATE INDEX jobs_group_claim ON jobs (queue, grp, priority DESC, run_at, id)
  WHERE status = 'pending' AND gate IS NULL;
CREATE INDEX jobs_gated_claim ON jobs (gate, type, priority DESC, run_at, id)
  WHERE status = 'pending' AND gate IS NOT NULL;

-- counts: a gated row counts as waiting until its gate opens
DROP TRIGGER jobs_count_ins;
CREATE TRIGGER jobs_count_ins AFTER INSERT ON jobs BEGIN
  INSERT INTO job_counts VALUES (new.queue, CASE WHEN new.gate IS NULL THEN new.status
                                                 ELSE 'waiting' END, 1)
    ON CONFLICT (queue, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER gates_opened AFTER UPDATE OF waiting ON gates
  WHEN new.waiting = 0 AND old.waiting > 0 BEGIN
  UPDATE job_counts SET n = n - new.children WHERE queue = new.queue AND status = 'waiting';
  INSERT INTO job_counts VALUES (new.queue, 'pending', new.children)
    ON CONFLICT (queue, status) DO UPDATE SET n = n + new.children;
END;

-- a parent's end: its gates, not its children's edges
DROP TRIGGER jobs_done_deps;
CREATE TRIGGER jobs_done_gates AFTER INSERT ON jobs_done
  WHEN new.status = 'succeeded' AND EXISTS (SELECT 1 FROM gate_parents WHERE parent = new.id) BEGIN
  UPDATE gates SET waiting = waiting - 1
   WHERE id IN (SELECT gate FROM gate_parents WHERE parent = new.id);
END;
