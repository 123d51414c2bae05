-- Layout "today_nt" (bench/sql/layout.py), a decomposition, not a candidate: today's schema
-- without the two statement triggers every UPDATE of jobd.jobs fires (events' OLD and NEW
-- transition tables, the dependants' NEW one), so a claim and a completion store no copy of
-- their rows for triggers. Against "today" it shows what those transition tables cost.
DROP TRIGGER jobs_events_updated ON jobd.jobs;
DROP TRIGGER jobs_deps_succeeded ON jobd.jobs;
