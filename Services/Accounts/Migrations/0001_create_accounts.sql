CREATE TABLE campuses (
    domain text PRIMARY KEY,
    name text NOT NULL,
    center_latitude double precision NOT NULL,
    center_longitude double precision NOT NULL,
    min_latitude double precision NOT NULL,
    min_longitude double precision NOT NULL,
    max_latitude double precision NOT NULL,
    max_longitude double precision NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id uuid PRIMARY KEY,
    email text NOT NULL UNIQUE CHECK (email = lower(email)),
    password_hash text NOT NULL,
    name text NOT NULL,
    campus text NOT NULL REFERENCES campuses (domain),
    mode text NOT NULL DEFAULT 'ordering' CHECK (mode IN ('ordering', 'delivering')),
    email_verified_at timestamptz,
    version bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE email_verifications (
    user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    code_hash bytea NOT NULL,
    expires_at timestamptz NOT NULL,
    failed_attempts integer NOT NULL DEFAULT 0
);

-- A family is one login session: every rotation stays in it, and reuse of a spent token revokes all of it.
CREATE TABLE refresh_tokens (
    id uuid PRIMARY KEY,
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    family_id uuid NOT NULL,
    token_hash bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    revoked_at timestamptz
);

CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

CREATE TABLE login_failures (
    key text NOT NULL,
    failed_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX login_failures_key_time ON login_failures (key, failed_at);
