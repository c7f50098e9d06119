/**
 * Pages inside the shell need a session: without one (a 401 from GET /v1/auth/me, or from any later request) the
 * user is sent to sign in, with `next` set to where they were, and comes back there afterwards.
 */
import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useEffect } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { ApiError, onUnauthorized } from '../api/client';
import { useMe } from '../api/session';
import { ErrorState, Loading } from '../ui/states';

export const signInPath = (next: string) =>
  next && next !== '/' ? `/sign-in?next=${encodeURIComponent(next)}` : '/sign-in';

export function RequireSession({ children }: { children: ReactNode }) {
  const me = useMe();
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const here = location.pathname + location.search;

  // A session that ends while a page is open (signed out elsewhere, expired): any 401 goes to sign in, once.
  useEffect(
    () =>
      onUnauthorized(() => {
        if (window.location.pathname === '/sign-in') return;
        queryClient.cancelQueries();
        navigate(signInPath(window.location.pathname + window.location.search), { replace: true });
      }),
    [navigate, queryClient],
  );

  if (me.isPending) return <Loading label="Loading your session" />;
  if (me.error instanceof ApiError && me.error.status === 401) return <Navigate to={signInPath(here)} replace />;
  if (me.error) return <ErrorState error={me.error} />;
  return children;
}
