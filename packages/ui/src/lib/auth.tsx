import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { setToken, type Role, type Schemas } from '../api/client';
import { loadMe } from '../api/loaders';

/**
 * What a role may do: the contract's role table (DAGs read / write / run-stop, user management),
 * and changing runtime profiles (admins and managers; protected ones are the admin's).
 */
export type Ability = 'write' | 'run' | 'admin' | 'audit' | 'profiles';
const ABILITIES: Record<Role, ReadonlySet<Ability>> = {
  admin: new Set(['write', 'run', 'admin', 'audit', 'profiles']),
  manager: new Set(['write', 'run', 'audit', 'profiles']),
  developer: new Set(['write', 'run']),
  operator: new Set(['run']),
  viewer: new Set(),
};

interface AuthState {
  /** undefined while the first /auth/me is on its way. */
  principal: Schemas['Principal'] | undefined;
  /** The API wants credentials and has none from us. */
  signedOut: boolean;
  can: (ability: Ability) => boolean;
  signIn: (session: Schemas['Session']) => void;
  signOut: () => void;
}

const AuthContext = createContext<AuthState | undefined>(undefined);

export function AuthProvider({ children }: { children: ReactNode }) {
  const [principal, setPrincipal] = useState<Schemas['Principal'] | undefined>();
  const [signedOut, setSignedOut] = useState(false);
  const refresh = useCallback(() => {
    loadMe().then(
      (me) => {
        setPrincipal(me.principal);
        setSignedOut(false);
      },
      () => setSignedOut(true),
    );
  }, []);
  useEffect(() => {
    refresh();
    const expired = () => {
      setToken(null);
      setSignedOut(true);
    };
    window.addEventListener('trellis:unauthorized', expired);
    return () => window.removeEventListener('trellis:unauthorized', expired);
  }, [refresh]);
  const value = useMemo<AuthState>(
    () => ({
      principal,
      signedOut,
      can: (ability) => principal !== undefined && ABILITIES[principal.role].has(ability),
      signIn: (session) => {
        setToken(session.token);
        // Signed in from now on: the next page must not bounce back to the login page.
        setPrincipal({ kind: 'user', id: session.user.id, name: session.user.username, role: session.user.role });
        setSignedOut(false);
      },
      signOut: () => {
        setToken(null);
        setPrincipal(undefined);
        setSignedOut(true);
      },
    }),
    [principal, signedOut, refresh],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const state = useContext(AuthContext);
  if (state === undefined) throw new Error('useAuth outside AuthProvider');
  return state;
}
