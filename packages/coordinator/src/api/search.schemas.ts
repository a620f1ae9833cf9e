/** Request and response schemas of the search endpoints (`/search/*`, `/docs/search`). */
import { z } from 'zod';

/** The longest search text accepted: every search scans every text, so an unbounded needle is refused at the edge. */
export const MAX_SEARCH_QUERY_LENGTH = 256;
const MAX_CURSOR_LENGTH = 2048;
const DEFAULT_RESULTS = 20;
const MAX_RESULTS = 100;

export const searchText = z
  .string({ error: 'q is required' })
  .min(1, 'q is required')
  .max(MAX_SEARCH_QUERY_LENGTH, `q must be at most ${MAX_SEARCH_QUERY_LENGTH} characters`)
  .describe(`Text to find, case-insensitively, within one line (1-${MAX_SEARCH_QUERY_LENGTH} characters)`);

const cursor = z
  .string()
  .min(1, 'cursor must not be empty')
  .max(MAX_CURSOR_LENGTH, 'cursor is not a cursor this service returned')
  .optional()
  .describe('The `nextCursor` of the previous page, with the same `q`');

export const resultPageQuery = z.object({
  q: searchText,
  cursor,
  limit: z.coerce
    .number()
    .int()
    .min(1, `limit must be 1-${MAX_RESULTS}`)
    .max(MAX_RESULTS, `limit must be 1-${MAX_RESULTS}`)
    .default(DEFAULT_RESULTS)
    .describe(`Results per page (default ${DEFAULT_RESULTS}, max ${MAX_RESULTS})`),
});

export const matchPageQuery = z.object({ q: searchText, cursor });

export const lineMatchSchema = z
  .object({
    line: z.string().describe('The matching line'),
    lineNumber: z.number().int().describe('Its 1-based line number'),
    startLine: z.number().int().describe('The first line of the snippet (the matching line itself)'),
  })
  .meta({ id: 'SearchMatch' });

const previewFields = {
  matches: z.array(lineMatchSchema).describe('The first matching lines'),
  hasMoreMatches: z.boolean().describe('Whether more lines match than `matches` shows'),
  nextMatchesCursor: z.string().optional().describe('The cursor of the item\'s `matches` endpoint for the lines after these; present when `hasMoreMatches`'),
};

const pageFields = {
  hasMore: z.boolean().describe('Whether more results follow this page'),
  nextCursor: z.string().optional().describe('Opaque cursor of the next page; present when `hasMore`'),
};

export const dagSearchPageSchema = z
  .object({ results: z.array(z.object({ fileName: z.string(), name: z.string(), ...previewFields })), ...pageFields })
  .meta({ id: 'DagSearchPage' });

export const docSearchPageSchema = z
  .object({ results: z.array(z.object({ id: z.string(), title: z.string(), ...previewFields })), ...pageFields })
  .meta({ id: 'DocSearchPage' });

export const matchPageSchema = z.object({ matches: z.array(lineMatchSchema), ...pageFields }).meta({ id: 'SearchMatchPage' });

export const docsSearchSchema = z
  .object({ results: z.array(z.object({ id: z.string(), title: z.string(), matches: z.array(lineMatchSchema) })) })
  .meta({ id: 'DocsSearchResults' });
