-- Layout "move_nt" (bench/sql/layout.py), after archive.sql: "move" with no trigger that
-- keeps a transition table on the hot path. The claim is the only UPDATE of jobs that
-- changes a status in this layout (every end is a move), so it records its own events in
-- a CTE (one probe of jobd.event_log while nobody listens) and jobs_events_updated goes;
-- the completion's move records its events, wakes result waiters (as today's completion
-- does) and releases dependants of the rows that have children (one call per statement,
-- only when some row has_children) in CTEs of its own, so jobs_arch has no statement
-- trigger with a transition table: no row is copied for triggers by a claim or a
-- completion.
DROP TRIGGER jobs_events_updated ON jobd.jobs;
DROP TRIGGER jobs_arch_events ON jobd.jobs_arch;
DROP TRIGGER jobs_arch_notify ON jobd.jobs_arch;
DROP TRIGGER jobs_arch_deps_succeeded ON jobd.jobs_arch;
-- jobd.deps_parents_succeeded's body (schema version 30) over an id array instead of a
-- transition table.
CREATE FUNCTION jobd.deps_succeeded_ids(ps bigint[], at timestamptz) RETURNS int
    LANGUAGE plpgsql AS $$
DECLARE
    kids bigint[];
BEGIN
    WITH u AS (UPDATE jobd.job_deps d SET ended_status = 'succeeded'
                WHERE d.parent = ANY(ps) AND num_nulls(d.ended_status) = 1
                RETURNING d.child)
    SELECT array_agg(DISTINCT u.child) INTO kids FROM u;
    IF cardinality(kids) = 1 THEN
        PERFORM jobd.deps_settle(kids[1], at);
    ELSIF kids IS NOT NULL THEN
        PERFORM jobd.deps_release(kids, at);
    END IF;
    RETURN 0;
END $$;
