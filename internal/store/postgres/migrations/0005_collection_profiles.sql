-- Collection profiles (docs/collections.md): the applied profile document; NULL when none was applied (the
-- collection's profile is then read from its settings).
ALTER TABLE {S}.collections ADD COLUMN profile jsonb;
