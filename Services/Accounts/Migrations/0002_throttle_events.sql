-- What the throttles count, by key within their windows: failed logins (per account and per address) and
-- sign-ups (per address).
ALTER TABLE login_failures RENAME TO throttle_events;
ALTER TABLE throttle_events RENAME COLUMN failed_at TO happened_at;
ALTER INDEX login_failures_key_time RENAME TO throttle_events_key_time;
