-- The students a moderator suspended (`user.suspended`): hidden from everyone, as if everyone had blocked them.
CREATE TABLE suspended_users (
    user_id uuid PRIMARY KEY
);
