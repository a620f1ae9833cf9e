/**
 * One counter for everything a run's profile entries are resolved from: workspaces, profiles
 * (every layer), their entries and sealed secrets. Each statement that changes one of them bumps
 * it in the same transaction, so a coordinator may keep resolved entries in memory and trust them
 * while the counter has not moved; it reads the counter with statements it sends anyway (the
 * definitions' version check, the admission), else on its own. The bump comes BEFORE the
 * statement's rows are locked: every writer takes the counter's row before any row of these
 * tables, so none can hold a row another writer waits for while it waits for the counter
 * (lockProfile takes it first too). Table locks are another matter: a TRUNCATE or a migration
 * that alters one of these tables takes its table lock first (nothing does so today).
 * `trellis_profiles_version` reads it with a snapshot of its own (VOLATILE): called after an
 * admission's claim in the same statement, it sees every change committed before the claim,
 * which the statement's own snapshot, taken before trellis_admit waits on its locks, may not.
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
CREATE TRIGGER workspaces_version BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON workspaces FOR EACH STATEMENT EXECUTE FUNCTION trellis_profiles_changed();
CREATE TRIGGER profiles_version BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON profiles FOR EACH STATEMENT EXECUTE FUNCTION trellis_profiles_changed();
CREATE TRIGGER profile_entries_version BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON profile_entries FOR EACH STATEMENT EXECUTE FUNCTION trellis_profiles_changed();
CREATE TRIGGER profile_secrets_version BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON profile_secrets FOR EACH STATEMENT EXECUTE FUNCTION trellis_profiles_changed();
`;
