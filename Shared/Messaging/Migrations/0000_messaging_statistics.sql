-- The outbox and the inbox take a row per event, and autovacuum analyzes them every few minutes under load. Their
-- statements go by key, so the planner needs no detail of their values: a sample of 3,000 rows (statistics target
-- 10) rather than 30,000 makes an analyze a tenth of the work, 40 ms of a core rather than 0.4-0.8 s, which fell in
-- one second and held up that second's requests. A service's own tables that take a row per event use the function
-- (0000_messaging_small_sample) too.
SELECT analyze_from_small_sample('outbox');
SELECT analyze_from_small_sample('inbox');
