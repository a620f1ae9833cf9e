import { z } from 'zod';
import { isValidDocumentId, MAX_DOCUMENT_ID_LENGTH } from '../documents/document-id.js';
import type { DocTreeNode } from '../documents/document-listing.js';
import { paginationQuery, paginationSchema } from './pagination.js';

// Ids are checked by the document service (the contract's rule, and that the path stays in the
// docs directory); here only their type and length, so every refusal reads the same.
const documentId = (what: string) => z.string({ error: `${what} is required` }).min(1, `${what} is required`).max(MAX_DOCUMENT_ID_LENGTH, `${what} must be at most ${MAX_DOCUMENT_ID_LENGTH} characters`);

export const listDocsQuery = paginationQuery.extend({
  flat: z
    .enum(['true', 'false'], { error: 'flat must be true or false' })
    .default('false')
    .transform((value) => value === 'true')
    .describe('true: a flat list of {id, title} sorted by id; false (default): the tree, paged by its top-level nodes'),
});

export const docPathQuery = z.object({ path: documentId('path').describe('The document id: its path under the docs directory without `.md`') });

/**
 * A document id checked against the contract's rule at the edge, for routes (search) that do
 * not go through the document service's check.
 */
export const validDocumentPath = documentId('path')
  .refine(isValidDocumentId, `path must be a document id: at most ${MAX_DOCUMENT_ID_LENGTH} characters of path segments that start with a letter or digit ([a-zA-Z0-9_. -])`)
  .describe('The document id');

export const createDocBody = z.object({ id: documentId('id'), content: z.string({ error: 'content is required' }) });

export const updateDocBody = z.object({ content: z.string({ error: 'content is required' }).describe('The full text, frontmatter included') });

export const renameDocBody = z.object({ newPath: documentId('newPath') });

export const docSummarySchema = z.object({ id: z.string(), title: z.string() }).meta({ id: 'DocumentSummary' });

export const documentSchema = z
  .object({
    id: z.string(),
    title: z.string().describe('The frontmatter `title`, else the last segment of the id'),
    content: z.string().describe('The full text, frontmatter included'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Document' });

export const docTreeNodeSchema: z.ZodType<DocTreeNode> = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.enum(['directory', 'file']),
    title: z.string().optional().describe('Files only'),
    get children() {
      return z.array(docTreeNodeSchema).optional().describe('Directories only');
    },
  })
  .meta({ id: 'DocTreeNode' }) as z.ZodType<DocTreeNode>;

/** One of `tree` (the default) and `items` (flat=true), with the pagination of what it holds. */
export const docListSchema = z.object({
  tree: z.array(docTreeNodeSchema).optional().describe('Without flat=true: this page of the top-level nodes'),
  items: z.array(docSummarySchema).optional().describe('With flat=true: this page of every document, sorted by id'),
  pagination: paginationSchema,
});

export const messageSchema = z.object({ message: z.string() });
