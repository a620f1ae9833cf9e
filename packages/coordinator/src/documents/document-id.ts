/** The contract's document id: path segments that start with a letter or digit, without `.md`. */
const DOCUMENT_ID = /^[a-zA-Z0-9][a-zA-Z0-9_. -]*(\/[a-zA-Z0-9][a-zA-Z0-9_. -]*)*$/;

export const MAX_DOCUMENT_ID_LENGTH = 256;

/** Whether an id is a document id; a valid id never climbs out of the docs directory (no `.` or `..` segment, no leading `/`). */
export function isValidDocumentId(id: string): boolean {
  return id.length <= MAX_DOCUMENT_ID_LENGTH && DOCUMENT_ID.test(id);
}
