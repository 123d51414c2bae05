-- Shared by the layouts with a lease table (lease, hot, leasemove): a running
-- attempt is a row of jobd.job_leases, inserted by the claim and deleted by
-- the report that ends the attempt. The reaper walks job_leases_expiry; a
-- heartbeat updates expires_at (not HOT: it is indexed; the table holds only
-- the running attempts). A statement trigger records the claims' events
-- (pending -> running) while someone listens, as jobs_events_updated does
-- today; while nobody does it is one probe of jobd.event_log.
CREATE TABLE jobd.job_leases (
    job_id           bigint PRIMARY KEY,
    attempt          int NOT NULL,
    worker_id        text NOT NULL,
    started_at       timestamptz NOT NULL,
    expires_at       timestamptz NOT NULL,
    lease_token_hash text
) WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02);
CREATE INDEX job_leases_expiry ON jobd.job_leases (expires_at);
CREATE FUNCTION jobd.events_leased() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF jobd.events_on() THEN
        INSERT INTO jobd.events (id, job, queue, type, from_st, to_st, attempt)
        SELECT nextval('jobd.event_id_seq'), j.id, j.queue, j.type, 'pending', 'running',
               n.attempt
          FROM new_rows n JOIN jobd.jobs j ON j.id = n.job_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER job_leases_events AFTER INSERT ON jobd.job_leases
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION jobd.events_leased();
DROP INDEX jobd.jobs_lease;
