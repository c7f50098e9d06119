/** Register: a user and an account of which they are the owner, signed in at once. */
import { Anchor, Button, PasswordInput, Stack, TextInput } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api, fieldError, unwrap } from '../api/client';
import { AuthLayout } from '../ui/AuthLayout';
import { FormError } from '../ui/states';
import { safeNext } from './SignIn';

const FIELDS = ['body/email', 'body/password', 'body/name', 'body/accountName'];

export function Component() {
  const [form, setForm] = useState({ email: '', password: '', name: '', accountName: '' });
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const register = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/v1/auth/register', {
          body: {
            email: form.email,
            password: form.password,
            ...(form.name.trim() ? { name: form.name.trim() } : {}),
            ...(form.accountName.trim() ? { accountName: form.accountName.trim() } : {}),
          },
        }),
      ),
    onSuccess: async () => {
      await queryClient.resetQueries();
      navigate(safeNext(params.get('next')), { replace: true });
    },
  });
  const set = (key: keyof typeof form) => (e: { currentTarget: { value: string } }) => {
    const value = e.currentTarget.value;
    setForm((f) => ({ ...f, [key]: value }));
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    register.mutate();
  };
  return (
    <AuthLayout
      title="Create your account"
      footer={
        <>
          Already registered?{' '}
          <Anchor component={Link} to="/sign-in">
            Sign in
          </Anchor>
        </>
      }
    >
      <form onSubmit={submit} noValidate>
        <Stack gap="sm">
          <TextInput
            label="Email"
            type="email"
            autoComplete="email"
            required
            value={form.email}
            onChange={set('email')}
            error={fieldError(register.error, 'body/email')}
          />
          <PasswordInput
            label="Password"
            description="At least 8 characters"
            autoComplete="new-password"
            required
            value={form.password}
            onChange={set('password')}
            error={fieldError(register.error, 'body/password')}
          />
          <TextInput
            label="Your name"
            autoComplete="name"
            value={form.name}
            onChange={set('name')}
            error={fieldError(register.error, 'body/name')}
          />
          <TextInput
            label="Company or team"
            description="The account's name; you can have several"
            autoComplete="organization"
            value={form.accountName}
            onChange={set('accountName')}
            error={fieldError(register.error, 'body/accountName')}
          />
          <FormError error={register.error} fields={FIELDS} title="Not registered" />
          <Button type="submit" loading={register.isPending}>
            Register
          </Button>
        </Stack>
      </form>
    </AuthLayout>
  );
}
