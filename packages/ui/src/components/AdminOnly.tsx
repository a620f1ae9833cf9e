import type { ReactNode } from 'react';
import { useAuth } from '../lib/auth';
import { Loading } from './common';

/** Pages only administrators may use: others are told so rather than shown 403s. */
export function AdminOnly({ children }: { children: ReactNode }) {
  const { can, principal } = useAuth();
  if (principal === undefined) return <Loading what="your session" />;
  if (!can('admin')) return <p role="alert">This page is for administrators.</p>;
  return <>{children}</>;
}
