import type { ReactNode } from 'react';
import { ErrorNote, Loading, Page } from './common';

/**
 * The frame of a list page (users, API keys, webhooks): title, the API's error, the form that
 * adds one, then the table of them, with loading and empty states. `row` renders one `<tr>`.
 */
export function ListPage<T>({ title, what, error, form, items, columns, row }: { title: string; what: string; error: Error | undefined; form?: ReactNode; items: T[] | undefined; columns: string[]; row: (item: T) => ReactNode }) {
  return (
    <Page title={title}>
      <ErrorNote error={error} />
      {form}
      {items === undefined ? (
        <Loading what={what} />
      ) : items.length === 0 ? (
        <p className="muted">No {what} yet.</p>
      ) : (
        <table>
          <caption className="visually-hidden">{title}</caption>
          <thead>
            <tr>
              {columns.map((c) => (
                <th scope="col" key={c}>
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>{items.map(row)}</tbody>
        </table>
      )}
    </Page>
  );
}

/** A role chosen from `roles` (a new user's or key's, or a user's own). */
export function RoleSelect<R extends string>({ label, value, roles, disabled, onChange }: { label: string; value: R; roles: readonly R[]; disabled?: boolean; onChange: (role: R) => void }) {
  return (
    <select aria-label={label} value={value} disabled={disabled} onChange={(e) => onChange(e.target.value as R)}>
      {roles.map((r) => (
        <option key={r}>{r}</option>
      ))}
    </select>
  );
}
