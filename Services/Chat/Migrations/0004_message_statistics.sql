-- A row per message: analyzed from a small sample, like the outbox (see 0000_messaging_statistics). Its statements go
-- by key (a conversation's page, a message's id).
DO $$
DECLARE
    each_column record;
BEGIN
    FOR each_column IN
        SELECT attname FROM pg_attribute WHERE attrelid = 'messages'::regclass AND attnum > 0 AND NOT attisdropped
    LOOP
        EXECUTE format('ALTER TABLE messages ALTER COLUMN %I SET STATISTICS 10', each_column.attname);
    END LOOP;
END
$$;
