-- Contacts, contact lists (imports), list memberships and the do-not-call list.

-- A contact belongs to the account: one row per E.164 number per account.
-- account_id carries no foreign key, for the same reason as contact_list_members below: contacts are
-- written in bulk by imports, and the per-row check was ~30% of the import's merge statement (200k rows,
-- PGlite CPU time). Rows are only inserted for the authenticated account; the statement-level trigger
-- on accounts (below) keeps the cascade on account deletion.
-- Phone numbers are E.164 (ASCII '+' and digits), so the "C" collation (bytewise) orders them the same
-- as any other; the unique index, the import's dedupe sort and the DNC joins compare them millions of
-- times per large import (a 1M-number sort: 1.0 s in "C", 1.4-1.8 s in C.UTF-8 on PostgreSQL 15).
CREATE TABLE contacts (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL,
  first_name text,
  last_name text,
  phone_e164 text COLLATE "C" NOT NULL,
  email text,
  company text,
  timezone text,
  -- Columns of the imported file that have no field of their own, kept as text.
  attributes jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Mirrors dnc_entries for this number, kept in step by imports and DNC changes, so dialers read one row.
  dnc boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX contacts_account_phone_key ON contacts (account_id, phone_e164);
-- Newest first, for the list and the export's keyset pagination.
CREATE INDEX contacts_account_created_idx ON contacts (account_id, created_at, id);

-- The cascade of accounts -> contacts, once per DELETE statement rather than per row.
CREATE FUNCTION contacts_drop_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM contacts c USING deleted_accounts d WHERE c.account_id = d.id;
  RETURN NULL;
END $$;
CREATE TRIGGER accounts_drop_contacts AFTER DELETE ON accounts
  REFERENCING OLD TABLE AS deleted_accounts FOR EACH STATEMENT EXECUTE FUNCTION contacts_drop_accounts();

-- Merges jsonb objects in order, later keys winning: folds the attributes of rows repeating a number in one import.
CREATE AGGREGATE jsonb_merge_agg(jsonb) (SFUNC = jsonb_concat, STYPE = jsonb, INITCOND = '{}');

-- One import: the counts are those of the import that created the list.
CREATE TABLE contact_lists (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name text NOT NULL,
  default_country char(2) NOT NULL,
  duplicate_policy text NOT NULL CHECK (duplicate_policy IN ('skip', 'update')),
  row_count integer NOT NULL DEFAULT 0,
  imported_count integer NOT NULL DEFAULT 0,
  updated_count integer NOT NULL DEFAULT 0,
  duplicate_count integer NOT NULL DEFAULT 0,
  invalid_count integer NOT NULL DEFAULT 0,
  dnc_count integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX contact_lists_account_idx ON contact_lists (account_id, created_at DESC);

-- A contact can be in several lists. Rows are written only by set-based statements joining existing lists
-- and contacts, so they carry no foreign keys: per-row checks cost more than the rest of a million-row
-- import (measured: 1.7 s per 100k rows). The statement-level triggers below keep the cascade on delete.
CREATE TABLE contact_list_members (
  list_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  account_id uuid NOT NULL,
  PRIMARY KEY (list_id, contact_id)
);
CREATE INDEX contact_list_members_contact_idx ON contact_list_members (contact_id);

CREATE FUNCTION contact_list_members_drop_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM contact_list_members m USING deleted_contacts d WHERE m.contact_id = d.id;
  RETURN NULL;
END $$;
CREATE TRIGGER contacts_drop_memberships AFTER DELETE ON contacts
  REFERENCING OLD TABLE AS deleted_contacts FOR EACH STATEMENT EXECUTE FUNCTION contact_list_members_drop_contacts();

CREATE FUNCTION contact_list_members_drop_lists() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM contact_list_members m USING deleted_lists d WHERE m.list_id = d.id;
  RETURN NULL;
END $$;
CREATE TRIGGER contact_lists_drop_memberships AFTER DELETE ON contact_lists
  REFERENCING OLD TABLE AS deleted_lists FOR EACH STATEMENT EXECUTE FUNCTION contact_list_members_drop_lists();

CREATE TABLE dnc_entries (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  phone_e164 text COLLATE "C" NOT NULL,
  reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, phone_e164)
);
CREATE INDEX dnc_entries_account_created_idx ON dnc_entries (account_id, created_at DESC);
