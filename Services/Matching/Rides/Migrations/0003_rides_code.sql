-- The ride code: four digits drawn when a driver accepts (again at each acceptance), shown to the rider only; the
-- driver enters it to start the ride. The wrong codes entered since are counted here, under the ride's row lock; the
-- fifth cancels the ride. Why a ride was cancelled: its rider called it off, or the code was refused.
ALTER TABLE rides
    ADD COLUMN code text CHECK (code ~ '^[0-9]{4}$'),
    ADD COLUMN wrong_codes integer NOT NULL DEFAULT 0 CHECK (wrong_codes BETWEEN 0 AND 5),
    ADD COLUMN cancel_reason text CHECK (cancel_reason IN ('rider', 'codeRefused', 'blocked'));

-- Rides waiting to start before codes existed get one now, from PostgreSQL's strong random source (gen_random_uuid), and
-- every ride cancelled so far was its rider's doing.
UPDATE rides
SET code = lpad(((('x' || left(replace(gen_random_uuid()::text, '-', ''), 8))::bit(32)::bigint) % 10000)::text, 4, '0')
WHERE status IN ('accepted', 'arrived') AND code IS NULL;
UPDATE rides SET cancel_reason = 'rider' WHERE status = 'cancelled' AND cancel_reason IS NULL;

ALTER TABLE rides
    ADD CONSTRAINT rides_code_while_driven CHECK (status NOT IN ('accepted', 'arrived') OR code IS NOT NULL);
