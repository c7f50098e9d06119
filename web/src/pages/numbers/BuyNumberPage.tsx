/** Search the built-in carrier's free numbers in an area code and buy one; or add a number the account owns. */
import {
  Alert,
  Anchor,
  Button,
  Card,
  Grid,
  Group,
  Pagination,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { api, fieldError, type Schemas, unwrap } from '../../api/client';
import { formatUsd } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, FormError, Loading, PageHeader } from '../../ui/states';

const PAGE_SIZE = 20;

function Bought({ number }: { number: Schemas['PhoneNumber'] }) {
  return (
    <Alert color="green" role="status" mb="md" title="Number added">
      {number.number} is yours ({formatUsd(number.monthlyFeeUsd)} a month).{' '}
      <Anchor component={Link} to="/numbers">
        Assign it to an agent
      </Anchor>
    </Alert>
  );
}

function Search({ onBought }: { onBought: (number: Schemas['PhoneNumber']) => void }) {
  const queryClient = useQueryClient();
  const [country, setCountry] = useState('US');
  const [areaCode, setAreaCode] = useState('');
  const [searched, setSearched] = useState<{ country: string; areaCode: string } | null>(null);
  const [page, setPage] = useState(1);
  const results = useQuery({
    queryKey: ['number-inventory', searched, page],
    queryFn: () =>
      unwrap(
        api.GET('/v1/phone-numbers/inventory/search', {
          params: {
            query: { ...(searched ?? { country, areaCode }), limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE },
          },
        }),
      ),
    enabled: searched !== null,
    placeholderData: keepPreviousData,
    retry: false,
  });
  const buy = useMutation({
    mutationFn: (number: string) => unwrap(api.POST('/v1/phone-numbers/inventory/purchase', { body: { number } })),
    onSuccess: (bought) => {
      onBought(bought);
      // Dropped rather than marked stale: the list must not show "no numbers yet" while it reloads.
      queryClient.removeQueries({ queryKey: ['phone-numbers'] });
      void queryClient.invalidateQueries({ queryKey: ['number-inventory'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setPage(1);
    setSearched({ country: country.trim().toUpperCase(), areaCode: areaCode.trim() });
  };
  return (
    <>
      <form onSubmit={submit} role="search" aria-label="Search free numbers">
        <Group align="flex-end" gap="sm" wrap="wrap">
          <TextInput
            label="Country"
            description="Two letters: US, CA, GB"
            required
            maxLength={2}
            w={140}
            value={country}
            onChange={(e) => setCountry(e.currentTarget.value.toUpperCase())}
            error={fieldError(results.error, 'querystring/country')}
          />
          <TextInput
            label="Area code"
            description="415 in the US, 20 for London"
            required
            inputMode="numeric"
            w={200}
            value={areaCode}
            onChange={(e) => setAreaCode(e.currentTarget.value)}
            error={fieldError(results.error, 'querystring/areaCode')}
          />
          <Button type="submit">Search</Button>
        </Group>
      </form>
      {buy.error && <ErrorState error={buy.error} title="Not bought" />}
      {searched === null ? null : results.isPending ? (
        <Loading label="Searching" />
      ) : results.error ? (
        fieldError(results.error, 'querystring/country') || fieldError(results.error, 'querystring/areaCode') ? null : (
          <ErrorState error={results.error} retry={() => results.refetch()} />
        )
      ) : results.data.total === 0 ? (
        <EmptyState title="No free numbers in that area code">Try a neighbouring area code.</EmptyState>
      ) : (
        <>
          <ScrollTable label="Free numbers" minWidth={480} mt="md" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Number</Table.Th>
                <Table.Th>Can</Table.Th>
                <Table.Th>Monthly</Table.Th>
                <Table.Th>Buy</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {results.data.availableNumbers.map((number) => (
                <Table.Tr key={number.number}>
                  <Table.Td>{number.number}</Table.Td>
                  <Table.Td>{number.capabilities.join(', ')}</Table.Td>
                  <Table.Td>{formatUsd(number.monthlyFeeUsd)}</Table.Td>
                  <Table.Td>
                    <Button
                      size="xs"
                      aria-label={`Buy ${number.number}`}
                      loading={buy.isPending && buy.variables === number.number}
                      disabled={buy.isPending}
                      onClick={() => buy.mutate(number.number)}
                    >
                      Buy
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </ScrollTable>
          <Group justify="space-between" mt="sm">
            <Text size="sm" c="dimmed">
              {results.data.total.toLocaleString()} free number{results.data.total === 1 ? '' : 's'}; the first month is
              charged when you buy.
            </Text>
            <Pagination
              total={Math.ceil(results.data.total / PAGE_SIZE)}
              value={page}
              onChange={setPage}
              getControlProps={(control) => ({ 'aria-label': `${control} page` })}
              getItemProps={(value) => ({ 'aria-label': `Page ${value}` })}
            />
          </Group>
        </>
      )}
    </>
  );
}

function AddOwn({ onAdded }: { onAdded: (number: Schemas['PhoneNumber']) => void }) {
  const queryClient = useQueryClient();
  const [number, setNumber] = useState('');
  const add = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/phone-numbers', { body: { number: number.trim() } })),
    onSuccess: (added) => {
      setNumber('');
      onAdded(added);
      queryClient.removeQueries({ queryKey: ['phone-numbers'] });
    },
  });
  return (
    <form
      aria-label="Add a number you own"
      onSubmit={(event) => {
        event.preventDefault();
        add.mutate();
      }}
    >
      <Stack gap="sm">
        <TextInput
          label="A number you already own"
          type="tel"
          required
          value={number}
          onChange={(e) => setNumber(e.currentTarget.value)}
          error={fieldError(add.error, 'body/number')}
        />
        <FormError error={add.error} fields={['body/number']} />
        <Group>
          <Button type="submit" variant="default" loading={add.isPending}>
            Add number
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

export function Component() {
  const [added, setAdded] = useState<Schemas['PhoneNumber'] | null>(null);
  return (
    <>
      <PageHeader title="Buy a number">
        <Button component={Link} to="/numbers" variant="default">
          Your numbers
        </Button>
      </PageHeader>
      {added && <Bought number={added} />}
      <Grid>
        <Grid.Col span={{ base: 12, lg: 8 }}>
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              Search free numbers
            </Title>
            <Search onBought={setAdded} />
          </Card>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 4 }}>
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              Bring your own
            </Title>
            <AddOwn onAdded={setAdded} />
          </Card>
        </Grid.Col>
      </Grid>
    </>
  );
}
