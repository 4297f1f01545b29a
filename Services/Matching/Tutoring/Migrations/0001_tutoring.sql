-- Tutoring (MentorMate): profiles, the courses they teach or need, swipes and matches.
CREATE TABLE tutoring_profiles (
    user_id uuid PRIMARY KEY,
    campus text NOT NULL,
    -- The name from the caller's token, for a user whose account events have not arrived yet.
    name text NOT NULL,
    role text NOT NULL CHECK (role IN ('student', 'tutor')),
    courses text[] NOT NULL,
    description text NOT NULL,
    rate_cents integer NOT NULL CHECK (rate_cents >= 0),
    availability text NOT NULL,
    preferences text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- One row per profile and course, with the profile's last activity: the feed ranks the opposite role's rows of the
-- caller's courses from this index alone and reads only the profiles of the page.
CREATE TABLE tutoring_courses (
    user_id uuid NOT NULL REFERENCES tutoring_profiles (user_id) ON DELETE CASCADE,
    course text NOT NULL,
    campus text NOT NULL,
    role text NOT NULL,
    active_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, course)
);

CREATE INDEX tutoring_courses_feed ON tutoring_courses (campus, role, course) INCLUDE (user_id, active_at);

-- A like or a pass, once per pair and direction.
CREATE TABLE tutoring_swipes (
    swiper_id uuid NOT NULL,
    target_id uuid NOT NULL,
    likes boolean NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (swiper_id, target_id)
);

-- At most one match per pair, ever: its members are stored in id order.
CREATE TABLE tutoring_matches (
    id uuid PRIMARY KEY,
    campus text NOT NULL,
    first_id uuid NOT NULL,
    second_id uuid NOT NULL,
    first_role text NOT NULL,
    second_role text NOT NULL,
    courses text[] NOT NULL,
    status text NOT NULL CHECK (status IN ('active', 'unmatched')),
    unmatched_by uuid,
    version bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (first_id < second_id),
    UNIQUE (first_id, second_id)
);

CREATE INDEX tutoring_matches_second ON tutoring_matches (second_id);
