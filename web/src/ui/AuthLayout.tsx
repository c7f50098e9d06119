/** The frame of the pages outside the shell (sign in, register): a centred card. */
import { Anchor, Center, Paper, Stack, Text, Title } from '@mantine/core';
import { type ReactNode, useEffect } from 'react';

export function AuthLayout({ title, children, footer }: { title: string; children: ReactNode; footer?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Parley`;
  }, [title]);
  return (
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder shadow="sm" p="xl" w="100%" maw={420}>
        <Stack gap="md">
          <Text fw={700} size="lg">
            Parley
          </Text>
          <Title order={1} size="h2">
            {title}
          </Title>
          {children}
          {footer && (
            <Text size="sm" c="dimmed">
              {footer}
            </Text>
          )}
          <Text size="xs" c="dimmed">
            The API and its documentation: <Anchor href="/api/docs">/api/docs</Anchor>
          </Text>
        </Stack>
      </Paper>
    </Center>
  );
}
