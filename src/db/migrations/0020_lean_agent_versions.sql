-- A version row keeps only the parts it changed; a part it left alone is read from the newest version before it that
-- changed it. Rows saved as full snapshots keep just their changed parts: every other value they hold is a copy.
UPDATE agent_versions
SET parts = coalesce(
  (SELECT jsonb_object_agg(part.key, part.value) FROM jsonb_each(parts) AS part WHERE part.key = ANY (changed_parts)),
  '{}'::jsonb
)
WHERE EXISTS (SELECT 1 FROM jsonb_object_keys(parts) AS name WHERE NOT name = ANY (changed_parts));
