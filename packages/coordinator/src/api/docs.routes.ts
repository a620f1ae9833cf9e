import type { DocumentStore } from '../documents/document-store.js';
import { documentTree } from '../documents/document-listing.js';
import { actorOf, defineRoute, NO_CONTENT, type AnyRoute } from '../http/routes.js';
import { paginate } from './pagination.js';
import { createDocBody, docListSchema, docPathQuery, documentSchema, listDocsQuery, messageSchema, renameDocBody, updateDocBody } from './doc.schemas.js';

/**
 * `/docs`: markdown documents, stored in the database and shared by every coordinator. Writes
 * need `dags:write` (the contract's write_dags permission and a writing role). A path that is
 * not a document id, or that leads out of the docs directory, is a 400.
 */
export function docRoutes(docs: DocumentStore): AnyRoute[] {
  const tag = 'documents';
  return [
    defineRoute({
      tag,
      permission: 'dags:read',
      method: 'get',
      path: '/docs',
      operationId: 'listDocs',
      summary: 'List documents: the tree (paged by its top-level nodes, directories first) or, with flat=true, every {id, title} sorted by id',
      query: listDocsQuery,
      response: docListSchema,
      handler: ({ query }) => {
        if (query.flat) {
          const { slice, pagination } = paginate(docs.list(), query.page, query.perPage);
          return Promise.resolve({ items: slice, pagination });
        }
        const { slice, pagination } = paginate(documentTree(docs.list()), query.page, query.perPage);
        return Promise.resolve({ tree: slice, pagination });
      },
    }),
    defineRoute({
      tag,
      permission: 'dags:write',
      method: 'post',
      path: '/docs',
      operationId: 'createDoc',
      summary: 'Create a document (409 when the id exists)',
      body: createDocBody,
      response: messageSchema,
      successStatus: 201,
      errors: [409],
      handler: async (ctx) => {
        const created = await docs.create(actorOf(ctx), ctx.body.id, ctx.body.content);
        return { message: `document ${created.id} created` };
      },
    }),
    defineRoute({
      tag,
      permission: 'dags:read',
      method: 'get',
      path: '/docs/doc',
      operationId: 'getDoc',
      summary: 'One document, its full text included',
      query: docPathQuery,
      response: documentSchema,
      errors: [404],
      handler: ({ query }) => docs.get(query.path),
    }),
    defineRoute({
      tag,
      permission: 'dags:write',
      method: 'patch',
      path: '/docs/doc',
      operationId: 'updateDoc',
      summary: 'Replace a document\'s text (frontmatter included); answers the document',
      query: docPathQuery,
      body: updateDocBody,
      response: documentSchema,
      errors: [404],
      handler: (ctx) => docs.update(actorOf(ctx), ctx.query.path, ctx.body.content),
    }),
    defineRoute({
      tag,
      permission: 'dags:write',
      method: 'delete',
      path: '/docs/doc',
      operationId: 'deleteDoc',
      summary: 'Delete a document; parent directories it leaves empty are removed',
      query: docPathQuery,
      response: NO_CONTENT,
      successStatus: 204,
      errors: [404],
      handler: (ctx) => docs.delete(actorOf(ctx), ctx.query.path),
    }),
    defineRoute({
      tag,
      permission: 'dags:write',
      method: 'post',
      path: '/docs/doc/rename',
      operationId: 'renameDoc',
      summary: 'Move a document to newPath (404 when it is missing, 409 when newPath exists); empty parent directories of the old path are removed; answers the document',
      query: docPathQuery,
      body: renameDocBody,
      response: documentSchema,
      errors: [404, 409],
      handler: (ctx) => docs.rename(actorOf(ctx), ctx.query.path, ctx.body.newPath),
    }),
  ];
}
