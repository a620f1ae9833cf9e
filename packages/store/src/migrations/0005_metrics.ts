/** Metrics count the last day's finished runs on every scrape: a range over this index, not a table scan. */
export const sql = `
CREATE INDEX runs_finished_at ON runs (finished_at) WHERE finished_at IS NOT NULL;
`;
