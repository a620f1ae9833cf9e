/**
 * DAG definitions, the base configuration and documents, shared by every coordinator.
 * `content` NULL is a tombstone: kept so a coordinator catching up by version sees the delete;
 * a later create of the name revives the row. `version` comes from the kind's counter row,
 * bumped (and so row-locked) in every write transaction: versions of one kind commit in order,
 * and a reader that has seen version v misses nothing by asking for `version > v`. Content is
 * UTF-8 bytes, not text: a file edited by hand may hold a NUL, which text cannot, and is still
 * stored (its DAG then shows the error). `origin` names the coordinator instance that wrote
 * the row, so exactly one coordinator records the change in the shared event log.
 */
export const sql = `
CREATE TABLE stored_file_versions (
  kind text PRIMARY KEY CHECK (kind IN ('dag', 'base', 'doc')),
  version bigint NOT NULL
);
INSERT INTO stored_file_versions (kind, version) VALUES ('dag', 0), ('base', 0), ('doc', 0);
CREATE TABLE stored_files (
  kind text NOT NULL REFERENCES stored_file_versions (kind),
  name text NOT NULL,
  content bytea,
  content_hash text,
  version bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  updated_by text NOT NULL,
  origin text NOT NULL,
  PRIMARY KEY (kind, name)
);
CREATE INDEX stored_files_kind_version ON stored_files (kind, version);
`;
