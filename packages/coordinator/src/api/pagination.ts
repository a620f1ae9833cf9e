import { z } from 'zod';

/** page (1-based, default 1) and perPage (default 50, 1-1000), as the contract's list endpoints take them. */
export const paginationQuery = z.object({
  page: z.coerce.number().int().min(1, 'page must be at least 1').default(1),
  perPage: z.coerce.number().int().min(1, 'perPage must be 1-1000').max(1000, 'perPage must be 1-1000').default(50),
});

export const paginationSchema = z
  .object({
    totalRecords: z.number().int(),
    currentPage: z.number().int(),
    totalPages: z.number().int(),
    nextPage: z.number().int().nullable(),
    prevPage: z.number().int().nullable(),
  })
  .meta({ id: 'Pagination' });

export type Pagination = z.output<typeof paginationSchema>;

/** The contract's pagination block for `total` records. */
export function paginationOf(total: number, page: number, perPage: number): Pagination {
  const totalPages = Math.max(1, Math.ceil(total / perPage));
  return {
    totalRecords: total,
    currentPage: page,
    totalPages,
    nextPage: page < totalPages ? page + 1 : null,
    prevPage: page > 1 ? Math.min(page - 1, totalPages) : null,
  };
}

export function paginate<T>(items: T[], page: number, perPage: number): { slice: T[]; pagination: Pagination } {
  return { slice: items.slice((page - 1) * perPage, page * perPage), pagination: paginationOf(items.length, page, perPage) };
}
