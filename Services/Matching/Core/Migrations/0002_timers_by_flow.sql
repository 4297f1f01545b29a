-- Timers of every flow: each names its flow and a kind of that flow's own.
ALTER TABLE timers ADD COLUMN flow text NOT NULL DEFAULT 'delivery';
ALTER TABLE timers ALTER COLUMN flow DROP DEFAULT;
ALTER TABLE timers DROP CONSTRAINT timers_kind_check;
