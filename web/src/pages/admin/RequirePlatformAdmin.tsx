/** The admin area's gate: its pages are for platform administrators (GET /v1/auth/me says who is one). */
import type { ReactNode } from 'react';
import { useMe } from '../../api/session';
import { ErrorState, Loading } from '../../ui/states';

export function RequirePlatformAdmin({ children }: { children: ReactNode }) {
  const me = useMe();
  if (me.isPending) return <Loading />;
  if (me.error) return <ErrorState error={me.error} retry={() => me.refetch()} />;
  if (!me.data.user?.isPlatformAdmin)
    return (
      <ErrorState
        title="Not allowed"
        error={new Error('The admin area is for platform administrators; ask one to make you one.')}
      />
    );
  return <>{children}</>;
}
