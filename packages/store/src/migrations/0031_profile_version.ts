/**
 * One counter for everything a run's profile entries are resolved from: workspaces, profiles
 * (every layer), their entries and sealed secrets. Each statement that changes one of them bumps
 * it in the same transaction, so a coordinator may keep resolved entries in memory and trust them
 * while the counter, read with a statement it sends anyway (admission), has not moved.
 */
export const sql = `
CREATE TABLE profile_version (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  version bigint NOT NULL
);
INSERT INTO profile_version (id, version) VALUES (true, 0);
CREATE FUNCTION trellis_profiles_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE profile_version SET version = version + 1;
  RETURN NULL;
END $$;
CREATE FUNCTION trellis_profiles_version() RETURNS float8 LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN (SELECT version::float8 FROM profile_version);
END $$;
CREATE TRIGGER workspaces_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON workspaces FOR EACH STATEMENT EXECUTE FUNCTION trellis_profiles_changed();
CREATE TRIGGER profiles_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON profiles FOR EACH STATEMENT EXECUTE FUNCTION trellis_profiles_changed();
CREATE TRIGGER profile_entries_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON profile_entries FOR EACH STATEMENT EXECUTE FUNCTION trellis_profiles_changed();
CREATE TRIGGER profile_secrets_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON profile_secrets FOR EACH STATEMENT EXECUTE FUNCTION trellis_profiles_changed();
`;
