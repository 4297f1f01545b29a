-- A row per entry of a feed: analyzed from a small sample, like the outbox (see 0000_messaging_statistics). Its
-- statements go by key (a user's entries after a seq) or by the partial index of entries awaiting a push.
DO $$
DECLARE
    each_column record;
BEGIN
    FOR each_column IN
        SELECT attname FROM pg_attribute WHERE attrelid = 'feed'::regclass AND attnum > 0 AND NOT attisdropped
    LOOP
        EXECUTE format('ALTER TABLE feed ALTER COLUMN %I SET STATISTICS 10', each_column.attname);
    END LOOP;
END
$$;
