/**
 * The honest states every page shows: loading, empty, and errors (the server's message; a 429 says when to try
 * again; a 404 says the thing is not there). Pages use these rather than their own.
 */
import { Alert, Button, Center, Group, Loader, Stack, Text, Title } from '@mantine/core';
import { type ReactNode, useEffect, useState } from 'react';
import { isRouteErrorResponse, Link, useRouteError } from 'react-router';
import { ApiError } from '../api/client';

export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <Center py="xl" role="status" aria-live="polite">
      <Group gap="sm">
        <Loader size="sm" aria-hidden />
        <Text c="dimmed">{label}…</Text>
      </Group>
    </Center>
  );
}

export function EmptyState({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <Stack align="center" gap="xs" py="xl" ta="center">
      <Title order={3} size="h4">
        {title}
      </Title>
      {children && <Text c="dimmed">{children}</Text>}
      {action}
    </Stack>
  );
}

/** Counts down the seconds a 429 asked to wait. */
function useCountdown(seconds: number | null) {
  const [left, setLeft] = useState(seconds);
  useEffect(() => {
    setLeft(seconds);
    if (seconds === null) return;
    const timer = setInterval(() => setLeft((s) => (s === null || s <= 1 ? 0 : s - 1)), 1000);
    return () => clearInterval(timer);
  }, [seconds]);
  return left;
}

/** What went wrong, in the server's words; `retry` offers to try again (after a 429's wait). */
export function ErrorState({ error, retry, title }: { error: unknown; retry?: () => void; title?: string }) {
  const api = error instanceof ApiError ? error : null;
  const wait = useCountdown(api?.retryAfterSec ?? null);
  const heading =
    title ??
    (api?.status === 404
      ? 'Not found'
      : api?.status === 429
        ? 'Too many requests'
        : api?.status === 403
          ? 'Not allowed'
          : 'Something went wrong');
  const message =
    api?.status === 429
      ? wait
        ? `The server asks to wait: try again in ${wait} s.`
        : 'You can try again now.'
      : error instanceof Error
        ? error.message
        : 'The request failed.';
  return (
    <Alert color="red" title={heading} role="alert" my="md">
      <Stack gap="xs">
        <Text size="sm">{message}</Text>
        {retry && (
          <Group>
            <Button size="xs" variant="light" color="red" onClick={retry} disabled={Boolean(wait)}>
              Try again
            </Button>
          </Group>
        )}
      </Stack>
    </Alert>
  );
}

/** A form's error that names no field of the form (a conflict, a 429): shown above its submit button. */
export function FormError({
  error,
  fields = [],
  title = 'Not saved',
}: {
  error: unknown;
  fields?: string[];
  title?: string;
}) {
  if (!error) return null;
  if (error instanceof ApiError && Object.keys(error.fieldErrors).some((field) => fields.includes(field))) return null;
  return <ErrorState error={error} title={title} />;
}

/** A route that failed to load (its code, or a thrown error). */
export function RouteError() {
  const error = useRouteError();
  const message = isRouteErrorResponse(error) ? `${error.status} ${error.statusText}` : (error as Error)?.message;
  return (
    <Stack p="xl" maw={600} mx="auto">
      <Title order={1} size="h2">
        This page could not be shown
      </Title>
      <Alert color="red" role="alert">
        {message || 'An unexpected error.'} A new version of the dashboard may have been installed: reload the page.
      </Alert>
      <Group>
        <Button onClick={() => window.location.reload()}>Reload</Button>
        <Button component={Link} to="/" variant="default">
          Home
        </Button>
      </Group>
    </Stack>
  );
}

/** A page's heading and its actions; sets the document title too. */
export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Parley`;
  }, [title]);
  return (
    <Group justify="space-between" mb="md" wrap="wrap">
      <Title order={1} size="h2">
        {title}
      </Title>
      {children && <Group gap="sm">{children}</Group>}
    </Group>
  );
}
