-- Tables that take a row per event are analyzed from a small sample (see 0000_messaging_statistics). The function is
-- a migration of its own, applied before its first use, so that a database whose statistics migration ran before the
-- function existed gets it too; `OR REPLACE` leaves one that has it as it is.
CREATE OR REPLACE FUNCTION analyze_from_small_sample(table_name regclass) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    each_column name;
BEGIN
    FOR each_column IN
        SELECT attname FROM pg_attribute WHERE attrelid = table_name AND attnum > 0 AND NOT attisdropped
    LOOP
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS 10', table_name, each_column);
    END LOOP;
END
$$;
