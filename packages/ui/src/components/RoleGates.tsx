import type { ReactNode } from 'react';
import { useAuth, type Ability } from '../lib/auth';
import { Loading } from './common';

/** A page for roles with `ability` only: others are told `refusal` rather than shown 403s. */
export function Only({ ability, refusal, children }: { ability: Ability; refusal: string; children: ReactNode }) {
  const { can, principal } = useAuth();
  if (principal === undefined) return <Loading what="your session" />;
  if (!can(ability)) return <p role="alert">{refusal}</p>;
  return <>{children}</>;
}

/** Pages only administrators may use. */
export function AdminOnly({ children }: { children: ReactNode }) {
  return (
    <Only ability="admin" refusal="This page is for administrators.">
      {children}
    </Only>
  );
}

/** Runtime profiles are read by roles that may run DAGs (they choose one when a run starts). */
export function ProfileReadersOnly({ children }: { children: ReactNode }) {
  return (
    <Only ability="run" refusal="Runtime profiles are for roles that may run DAGs.">
      {children}
    </Only>
  );
}
