/** The signed-in user (GET /v1/auth/me), shared by every page through the query cache. */
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from './client';

export const meQuery = {
  queryKey: ['me'] as const,
  queryFn: () => unwrap(api.GET('/v1/auth/me')),
  staleTime: 60_000,
  retry: false,
};

export const useMe = () => useQuery(meQuery);
