-- Layout "move_slim" (bench/sql/layout.py), instead of archive.sql: the archive as the
-- chosen layout makes it (docs/DESIGN.md, Table layout, round three): by day of
-- finished_at, each day by status, so retention per outcome drops a (day, status) leaf and
-- a leaf's status is implied: no (status, id) index; each leaf's (id) index serves the
-- listings by status and the reads by id. Three entries per finished job (today's jobs_done:
-- five, written by the archive pass). Triggers as archive.sql's (move_nt.sql drops them).
CREATE TABLE jobd.jobs_arch (LIKE jobd.jobs_done INCLUDING DEFAULTS)
    PARTITION BY RANGE (finished_at);
CREATE INDEX jobs_arch_queue_status_id ON jobd.jobs_arch (queue, status, id);
CREATE INDEX jobs_arch_type_id ON jobd.jobs_arch (type, id);
CREATE INDEX jobs_arch_schedule_id ON jobd.jobs_arch (schedule, id) WHERE schedule IS NOT NULL;
DO $$
DECLARE d date := current_date - 2;
        leaf text;
        st text;
BEGIN
    WHILE d < current_date + 3 LOOP
        leaf := 'jobs_arch_' || to_char(d, 'YYYYMMDD');
        EXECUTE format('CREATE TABLE jobd.%I PARTITION OF jobd.jobs_arch FOR VALUES FROM (%L) TO (%L) '
                       'PARTITION BY LIST (status)', leaf, d, d + 1);
        FOREACH st IN ARRAY ARRAY['succeeded', 'dead', 'cancelled'] LOOP
            EXECUTE format('CREATE TABLE jobd.%I PARTITION OF jobd.%I FOR VALUES IN (%L)',
                           leaf || '_' || left(st, 1), leaf, st);
            EXECUTE format('CREATE INDEX ON jobd.%I (id)', leaf || '_' || left(st, 1));
        END LOOP;
        d := d + 1;
    END LOOP;
END $$;
CREATE TRIGGER jobs_arch_notify AFTER INSERT ON jobd.jobs_arch
    REFERENCING NEW TABLE AS ended FOR EACH STATEMENT EXECUTE FUNCTION jobd.notify_done();
CREATE TRIGGER jobs_arch_events AFTER INSERT ON jobd.jobs_arch
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION jobd.events_ended();
CREATE TRIGGER jobs_arch_deps_succeeded AFTER INSERT ON jobd.jobs_arch
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION jobd.deps_parents_succeeded();
DROP TRIGGER jobs_deps_succeeded ON jobd.jobs;
DROP INDEX jobd.jobs_succeeded;
