-- Contact search through a trigram index, and the attribute limits of a contact in SQL.

-- pg_trgm ships with PostgreSQL (a trusted extension: the database owner may create it) and with PGlite,
-- which loads it when the database is opened.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The text GET /v1/contacts?q= searches: "first last", the email and the number, joined by a control
-- character a search cannot contain, so a match never spans two fields. Without an index each search read
-- every contact of the account and ran four case-insensitive matches per row (seconds at 200k contacts on
-- PGlite, blocking everyone); the trigram index finds the candidates of a 3+ character search directly.
-- IMMUTABLE and a plain expression, so the planner inlines it and matches the index below.
CREATE FUNCTION contact_search_text(first_name text, last_name text, email text, phone text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN coalesce(first_name, '') || ' ' || coalesce(last_name, '') || E'\x1f' || coalesce(email, '') || E'\x1f' || phone;

-- phone_e164 is COLLATE "C"; the other columns use the database's collation: the number is relabelled so the
-- expression has one collation for ILIKE. Queries must spell the expression exactly like this to use the index.
-- New entries wait in a pending list that the inserting statement folds into the index when it is full: a 1 MB
-- list (instead of 4 MB) halves the longest such statement of an import (on PGlite, how long others wait) for
-- the same total work.
CREATE INDEX contacts_search_idx ON contacts
  USING gin (contact_search_text(first_name, last_name, email, phone_e164 COLLATE "default") gin_trgm_ops)
  WITH (gin_pending_list_limit = 1024);

-- True when attributes hold at most max_keys keys and max_chars characters of keys and values in all: the
-- limits imports and PATCH apply to one contact (checked here when an import merges rows into a contact).
CREATE FUNCTION contact_attributes_fit(attributes jsonb, max_keys integer, max_chars integer) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN (SELECT count(*) <= max_keys AND coalesce(sum(length(key) + length(value)), 0) <= max_chars FROM jsonb_each_text(attributes));

-- The size of a contact's attributes as JSON text, kept by PostgreSQL on every write: lists and the export read
-- it to bound what one response or batch loads, without reading the attributes themselves (a contact stored
-- before imports limited attributes may hold megabytes).
ALTER TABLE contacts ADD COLUMN attributes_bytes integer GENERATED ALWAYS AS (octet_length(attributes::text)) STORED;
