-- Collection profiles (docs/collections.md): the applied profile document as JSON; '' when none was applied
-- (the collection's profile is then read from its settings).
ALTER TABLE collections ADD COLUMN profile TEXT NOT NULL DEFAULT '';
