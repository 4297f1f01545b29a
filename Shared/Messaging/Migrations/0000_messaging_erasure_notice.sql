-- An object that mentions a person who deleted their account loses its `notice` (Contracts' Notice: a sentence that
-- may name them in any words), beside what erase_person always erased. The fields' erasure keeps its body under a new
-- name; its calls on nested values come here by name.
ALTER FUNCTION erase_person(jsonb, uuid, text) RENAME TO erase_person_fields;
CREATE FUNCTION erase_person(doc jsonb, person uuid, erased_name text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(erased) = 'object' AND erased ? 'notice'
        AND doc::text ILIKE '%' || person::text || '%' THEN erased - 'notice' ELSE erased END
    FROM erase_person_fields(doc, person, erased_name) AS erased
$$;
