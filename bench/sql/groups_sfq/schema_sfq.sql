-- The SFQ prototype's schema: jobd's (`jobd migrate`, PostgreSQL 35) plus a
-- start tag per job (bench/sql/groups_sfq.py; docs/DESIGN.md, Groups,
-- "Alternative measured: start-time fair queueing tags"). Not a migration.
--
-- tag: the job's start tag, set at enqueue for a grouped job that is due
-- (NULL for an ungrouped job, a job with run_at in the future, a retry).
-- The index count per pending grouped job stays today's two:
--   jobs_group_claim (queue, grp, priority, run_at, id)  -> jobs_sfq_tag (queue, grp, tag):
--       a group's last pending tag, one backwards probe at enqueue
--   jobs_claim_queue (queue, priority, run_at, id)       -> jobs_sfq_claim (queue, priority, tag, id)
--       for tagged jobs, and jobs_claim_queue kept for the untagged ones only
ALTER TABLE jobd.jobs ADD COLUMN tag bigint;
DROP INDEX jobd.jobs_group_claim;
DROP INDEX jobd.jobs_claim_queue;
CREATE INDEX jobs_claim_queue ON jobd.jobs (queue, priority DESC, run_at, id)
    WHERE status = 'pending' AND tag IS NULL;
CREATE INDEX jobs_sfq_claim ON jobd.jobs (queue, priority DESC, tag, id)
    WHERE status = 'pending' AND tag IS NOT NULL;
CREATE INDEX jobs_sfq_tag ON jobd.jobs (queue, (COALESCE(grp, '')), tag)
    WHERE status = 'pending' AND tag IS NOT NULL;
