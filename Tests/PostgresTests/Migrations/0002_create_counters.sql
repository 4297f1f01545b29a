CREATE TABLE counters (name text PRIMARY KEY, value integer NOT NULL);
