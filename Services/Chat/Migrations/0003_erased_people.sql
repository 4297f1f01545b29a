-- People who deleted their account: their users row stays, with the erased name, as the record that they are gone.
ALTER TABLE users ADD COLUMN erased_at timestamptz;

-- A message whose sender deleted their account: its text is empty, and its members see that it was removed.
ALTER TABLE messages ADD COLUMN removed_at timestamptz;

-- Whether the person deleted their account, as committed now rather than when the calling statement began: a send
-- that waited for an erasure to release the sender's membership sees that erasure (PL/pgSQL, never inlined, takes a
-- fresh snapshot for each query of a volatile function).
CREATE FUNCTION chat_user_is_erased(person uuid) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM users WHERE id = person AND erased_at IS NOT NULL);
END
$$;
