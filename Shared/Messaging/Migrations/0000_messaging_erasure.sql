-- A JSON document (an event's payload, a feed entry) with everything in it that names a person who deleted their
-- account erased. Documents follow one convention: an object that holds a person's id under `userId` or `<role>Id`
-- names them under `name`, `firstName`, `email`, `bio`, `description` (for `userId`) or `<role>Name`,
-- `<role>FirstName` (for `<role>Id`), and what they wrote is the `text` of an object whose `senderId` or
-- `reviewerId` is theirs. Ids compare in any case (Swift writes them in capitals). Names become the erased name, what they wrote becomes empty, their photo is dropped.
CREATE FUNCTION erase_person(doc jsonb, person uuid, erased_name text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    result jsonb;
    id_key text;
    role text;
    target text;
BEGIN
    IF jsonb_typeof(doc) = 'array' THEN
        SELECT coalesce(jsonb_agg(erase_person(element, person, erased_name) ORDER BY n), '[]'::jsonb) INTO result
        FROM jsonb_array_elements(doc) WITH ORDINALITY AS t(element, n);
        RETURN result;
    ELSIF jsonb_typeof(doc) <> 'object' THEN
        RETURN doc;
    END IF;
    SELECT coalesce(jsonb_object_agg(key, erase_person(value, person, erased_name)), '{}'::jsonb) INTO result
    FROM jsonb_each(doc);
    FOR id_key IN
        SELECT key FROM jsonb_each_text(doc) WHERE lower(value) = person::text AND (key = 'userId' OR key ~ '^[a-z]+Id$')
    LOOP
        role := CASE WHEN id_key = 'userId' THEN '' ELSE left(id_key, -2) END;
        FOREACH target IN ARRAY CASE WHEN role = '' THEN ARRAY['name', 'firstName'] ELSE
            ARRAY[role || 'Name', role || 'FirstName'] END
        LOOP
            IF jsonb_typeof(result -> target) = 'string' THEN
                result := jsonb_set(result, ARRAY[target], to_jsonb(erased_name));
            END IF;
        END LOOP;
        FOREACH target IN ARRAY CASE WHEN role = '' THEN ARRAY['email', 'bio', 'description'] ELSE
            ARRAY[role || 'Email', role || 'Bio'] END || CASE WHEN role IN ('sender', 'reviewer') THEN ARRAY['text']
            ELSE ARRAY[]::text[] END
        LOOP
            IF jsonb_typeof(result -> target) = 'string' THEN
                result := jsonb_set(result, ARRAY[target], '""'::jsonb);
            END IF;
        END LOOP;
        IF role = '' AND result ? 'photoId' THEN
            result := jsonb_set(result, ARRAY['photoId'], 'null'::jsonb);
        END IF;
    END LOOP;
    RETURN result;
END
$$;
