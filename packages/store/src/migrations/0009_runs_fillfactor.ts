/**
 * Room on each page of `runs` for updated row versions. A run's row is updated several times
 * in its first seconds (admission, the worker's acknowledgement, status snapshots); updates
 * that change no indexed column can then stay on the page (HOT) instead of adding an entry
 * to every one of the table's indexes. Applies to pages written from now on.
 */
export const sql = `
ALTER TABLE runs SET (fillfactor = 80);
`;
