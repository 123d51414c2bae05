-- Layout "hot" (bench/sql/layout.py), after leases.sql and archive.sql: jobs' indexes
-- rebuilt without predicates, so no column a claim writes is in any index (HOT needs that,
-- and room on the page: fillfactor 50, as a claim of 100 updates whole pages at once).
-- jobs holds pending and running rows only (a completion moves the row out).
ALTER TABLE jobd.jobs SET (fillfactor = 50);
DROP INDEX jobd.jobs_claim_queue, jobd.jobs_claim_type, jobd.jobs_next_type,
    jobd.jobs_pending_queue_type, jobd.jobs_queue_id, jobd.jobs_type_id, jobd.jobs_group_claim;
CREATE INDEX jobs_claim_queue ON jobd.jobs (queue, priority DESC, run_at, id);
CREATE INDEX jobs_claim_type ON jobd.jobs (type, priority DESC, run_at, id);
CREATE INDEX jobs_next_type ON jobd.jobs (type, run_at);
CREATE INDEX jobs_pending_queue_type ON jobd.jobs (queue, type, id);
CREATE INDEX jobs_queue_id ON jobd.jobs (queue, id);
CREATE INDEX jobs_type_id ON jobd.jobs (type, id);
CREATE INDEX jobs_group_claim ON jobd.jobs (queue, (COALESCE(grp, '')), priority DESC, run_at, id);
