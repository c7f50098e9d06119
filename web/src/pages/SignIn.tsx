/** Sign in with email and password; the server sets the vsid session cookie. Back to `next` afterwards. */
import { Anchor, Button, PasswordInput, Stack, TextInput } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api, fieldError, unwrap } from '../api/client';
import { AuthLayout } from '../ui/AuthLayout';
import { FormError } from '../ui/states';

/** Only a path of this dashboard: never another site. */
export const safeNext = (next: string | null) => (next?.startsWith('/') && !next.startsWith('//') ? next : '/');

export function Component() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const signIn = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/auth/login', { body: { email, password } })),
    onSuccess: async () => {
      await queryClient.resetQueries();
      navigate(safeNext(params.get('next')), { replace: true });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate();
  };
  const next = params.get('next');
  return (
    <AuthLayout
      title="Sign in"
      footer={
        <>
          No account yet?{' '}
          <Anchor component={Link} to={next ? `/register?next=${encodeURIComponent(next)}` : '/register'}>
            Register
          </Anchor>
        </>
      }
    >
      <form onSubmit={submit} noValidate>
        <Stack gap="sm">
          <TextInput
            label="Email"
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
            error={fieldError(signIn.error, 'body/email')}
          />
          <PasswordInput
            label="Password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.currentTarget.value)}
            error={fieldError(signIn.error, 'body/password')}
          />
          <FormError error={signIn.error} fields={['body/email', 'body/password']} title="Not signed in" />
          <Button type="submit" loading={signIn.isPending}>
            Sign in
          </Button>
        </Stack>
      </form>
    </AuthLayout>
  );
}
