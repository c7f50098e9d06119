/** The frame of every signed-in page: the header (account, sign out), the navigation, and the page. */
import { AppShell, Burger, Button, Group, NavLink, Text, VisuallyHidden } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQueryClient } from '@tanstack/react-query';
import { Suspense } from 'react';
import { NavLink as RouterNavLink, Outlet, useLocation, useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import { useMe } from '../api/session';
import { Loading } from '../ui/states';
import { NAV_ITEMS } from './nav';

export function Shell() {
  const [opened, { toggle, close }] = useDisclosure();
  const me = useMe();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const location = useLocation();

  async function signOut() {
    await unwrap(api.POST('/v1/auth/logout')).catch(() => undefined);
    queryClient.clear();
    navigate('/sign-in', { replace: true });
  }

  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Text fw={700} size="lg">
              Parley
            </Text>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <Text size="sm" c="dimmed" visibleFrom="xs" truncate maw={240}>
              {me.data?.account.name}
            </Text>
            <Button variant="default" size="xs" onClick={signOut}>
              Sign out
              <VisuallyHidden> {me.data?.user?.email}</VisuallyHidden>
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label="Main">
        {NAV_ITEMS.filter((item) => !item.platformAdmin || me.data?.user?.isPlatformAdmin).map((item) => (
          <NavLink
            key={item.to}
            component={RouterNavLink}
            to={item.to}
            end={item.end}
            label={item.label}
            onClick={close}
            active={item.end ? location.pathname === item.to : location.pathname.startsWith(item.to)}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main id="main" tabIndex={-1}>
        <Suspense fallback={<Loading />}>
          <Outlet />
        </Suspense>
      </AppShell.Main>
    </AppShell>
  );
}
