-- Shared by the layouts whose completion MOVES the row (move, hot, leasemove):
-- jobd.jobs_arch, the finished jobs partitioned by day of finished_at, so that
-- retention is DROP TABLE of a day's partition, and nothing ever UPDATEs it.
-- The indexes are those of today's jobd.jobs_done minus jobs_done_finished
-- (the partition bound does its work) and with a plain index on id (a unique
-- index on a partitioned table must hold the partition key; ids come from one
-- sequence). The triggers are those of today's jobs_done, on the parent:
-- NOTIFY jobd_done (statement), events (statement), and the release of
-- dependants, statement-wise for successes (today's jobs_deps_succeeded moves
-- here: no completion updates jobs any more) and row-wise for other ends.
CREATE TABLE jobd.jobs_arch (LIKE jobd.jobs_done INCLUDING DEFAULTS)
    PARTITION BY RANGE (finished_at);
DO $$
DECLARE d date := current_date - 2;
BEGIN
    WHILE d < current_date + 3 LOOP
        EXECUTE format('CREATE TABLE jobd.jobs_arch_%s PARTITION OF jobd.jobs_arch '
                       'FOR VALUES FROM (%L) TO (%L)', to_char(d, 'YYYYMMDD'), d, d + 1);
        d := d + 1;
    END LOOP;
END $$;
CREATE TABLE jobd.jobs_arch_default PARTITION OF jobd.jobs_arch DEFAULT;
CREATE INDEX jobs_arch_id ON jobd.jobs_arch (id);
CREATE INDEX jobs_arch_status_id ON jobd.jobs_arch (status, id);
CREATE INDEX jobs_arch_queue_status_id ON jobd.jobs_arch (queue, status, id);
CREATE INDEX jobs_arch_type_id ON jobd.jobs_arch (type, id);
CREATE INDEX jobs_arch_schedule_id ON jobd.jobs_arch (schedule, id) WHERE schedule IS NOT NULL;
CREATE TRIGGER jobs_arch_notify AFTER INSERT ON jobd.jobs_arch
    REFERENCING NEW TABLE AS ended FOR EACH STATEMENT EXECUTE FUNCTION jobd.notify_done();
CREATE TRIGGER jobs_arch_events AFTER INSERT ON jobd.jobs_arch
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION jobd.events_ended();
CREATE TRIGGER jobs_arch_deps_succeeded AFTER INSERT ON jobd.jobs_arch
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION jobd.deps_parents_succeeded();
DROP TRIGGER jobs_deps_succeeded ON jobd.jobs;
DROP INDEX jobd.jobs_succeeded;
