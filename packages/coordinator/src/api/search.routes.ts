import { z } from 'zod';
import { DAG_FILE_NAME } from '@trellis/core';
import { defineRoute, type AnyRoute } from '../http/routes.js';
import { validDocumentPath } from './doc.schemas.js';
import { PREVIEW_MATCHES, type SearchQueries } from '../search/search-queries.js';
import { dagSearchSchema } from './dag.schemas.js';
import { docSearchPageSchema, docsSearchSchema, dagSearchPageSchema, matchPageQuery, matchPageSchema, resultPageQuery, searchText } from './search.schemas.js';

function searchDags(search: SearchQueries): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/search/dags',
    operationId: 'searchDagSpecs',
    permission: 'dags:read',
    summary: `Search DAG specs: matching DAGs by file name, each with its first ${PREVIEW_MATCHES} matching lines`,
    tag: 'search',
    response: dagSearchPageSchema,
    query: resultPageQuery,
    handler: ({ query }) => Promise.resolve(search.searchDags(query)),
  });
}

function searchDocs(search: SearchQueries): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/search/docs',
    operationId: 'searchDocuments',
    permission: 'dags:read',
    summary: `Search documents: matching documents by id, each with its first ${PREVIEW_MATCHES} matching lines`,
    tag: 'search',
    response: docSearchPageSchema,
    query: resultPageQuery,
    handler: ({ query }) => Promise.resolve(search.searchDocs(query)),
  });
}

function dagMatches(search: SearchQueries): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/search/dags/{fileName}/matches',
    operationId: 'searchDagMatches',
    permission: 'dags:read',
    summary: 'More matching lines of one DAG spec, 20 a page',
    tag: 'search',
    response: matchPageSchema,
    params: z.object({ fileName: z.string().regex(DAG_FILE_NAME, 'Invalid DAG name format') }),
    query: matchPageQuery,
    errors: [404],
    handler: ({ params, query }) => Promise.resolve(search.dagMatches(params.fileName, query)),
  });
}

function docMatches(search: SearchQueries): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/search/docs/matches',
    operationId: 'searchDocumentMatches',
    permission: 'dags:read',
    summary: 'More matching lines of one document, 20 a page',
    tag: 'search',
    response: matchPageSchema,
    query: matchPageQuery.extend({ path: validDocumentPath }),
    errors: [404],
    handler: ({ query }) => Promise.resolve(search.docMatches(query.path, query)),
  });
}

function docsSearch(search: SearchQueries): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/docs/search',
    operationId: 'searchDocs',
    permission: 'dags:read',
    summary: `Every document whose text matches, with its first ${PREVIEW_MATCHES} matching lines (/search/docs/matches has the rest)`,
    tag: 'docs',
    response: docsSearchSchema,
    query: z.object({ q: searchText }),
    handler: ({ query }) => Promise.resolve(search.docsSearch(query.q)),
  });
}

function legacyDagSearch(search: SearchQueries): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/dags/search',
    operationId: 'searchDags',
    permission: 'dags:read',
    summary: `Full-text search over DAG specs (legacy): every matching DAG with its first ${PREVIEW_MATCHES} matching lines, un-paged; /search/dags pages`,
    tag: 'dags',
    response: dagSearchSchema,
    query: z.object({ q: searchText }),
    handler: ({ query }) => Promise.resolve(search.legacyDagSearch(query.q)),
  });
}

export function searchRoutes(search: SearchQueries): AnyRoute[] {
  return [searchDags(search), searchDocs(search), dagMatches(search), docMatches(search), docsSearch(search), legacyDagSearch(search)];
}
