import { useState, type FormEvent } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import { ErrorNote, useAction } from '../components/common';
import { useAuth } from '../lib/auth';

/** Sign in, or create the first admin on a fresh installation (`POST /auth/setup`). */
export default function Login({ mode }: { mode: 'login' | 'setup' }) {
  const { signIn } = useAuth();
  const navigate = useNavigate();
  const location = useLocation();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [act, busy, error] = useAction();
  const from = (location.state as { from?: string } | null)?.from ?? '/';
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void act(async () => {
      const body = { username, password };
      const session = mode === 'setup' ? await unwrap(api.POST('/auth/setup', { body })) : await unwrap(api.POST('/auth/login', { body }));
      signIn(session);
      void navigate(from === '/login' || from === '/setup' ? '/' : from, { replace: true });
    });
  };
  const title = mode === 'setup' ? 'Create the first administrator' : 'Sign in to Trellis';
  return (
    <form className="card login" onSubmit={submit} aria-labelledby="login-title">
      <h1 id="login-title">{title}</h1>
      <div className="field">
        <label htmlFor="username">Username</label>
        <input id="username" autoComplete="username" required value={username} onChange={(e) => setUsername(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="password">Password</label>
        <input id="password" type="password" autoComplete={mode === 'setup' ? 'new-password' : 'current-password'} required minLength={mode === 'setup' ? 8 : undefined} value={password} onChange={(e) => setPassword(e.target.value)} />
      </div>
      <ErrorNote error={error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {mode === 'setup' ? 'Create administrator' : 'Sign in'}
        </button>
      </div>
      {mode === 'login' ? (
        <p className="small">
          First start with built-in users? <Link to="/setup">Create the first administrator</Link>.
        </p>
      ) : (
        <p className="small">
          <Link to="/login">Back to sign in</Link>
        </p>
      )}
    </form>
  );
}
