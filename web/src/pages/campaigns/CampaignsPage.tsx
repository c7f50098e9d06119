/** The account's campaigns, newest first, filterable by status. */
import { Anchor, Badge, Button, Select, Table } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { formatDateTime, humanize } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, Loading, PageHeader } from '../../ui/states';
import { CAMPAIGN_COLORS, CAMPAIGN_STATUSES as STATUSES, type CampaignStatus as Status } from './status';
import { ListFooter } from '../../ui/ListFooter';

const PAGE_SIZE = 25;
const isStatus = (value: string | null): value is Status => STATUSES.some((status) => status === value);

export function Component() {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const statusParam = params.get('status');
  const status = isStatus(statusParam) ? statusParam : undefined;
  const campaigns = useQuery({
    queryKey: ['campaigns', page, status],
    queryFn: () =>
      unwrap(
        api.GET('/v1/campaigns', {
          params: { query: { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE, ...(status ? { status } : {}) } },
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: 10_000,
  });
  const newButton = (
    <Button component={Link} to="/campaigns/new">
      New campaign
    </Button>
  );
  return (
    <>
      <PageHeader title="Campaigns">{newButton}</PageHeader>
      <Select
        label="Status"
        placeholder="Any"
        data={STATUSES.map((value) => ({ value, label: humanize(value) }))}
        value={status ?? null}
        onChange={(value) => setParams(value ? { status: value } : {})}
        clearable
        maw={240}
        mb="md"
      />
      {campaigns.isPending ? (
        <Loading label="Loading campaigns" />
      ) : campaigns.error ? (
        <ErrorState error={campaigns.error} retry={() => campaigns.refetch()} />
      ) : campaigns.data.total === 0 ? (
        <EmptyState
          title={status ? `No ${status} campaign` : 'No campaigns yet'}
          action={status ? undefined : newButton}
        >
          {status ? undefined : 'A campaign has an agent call the contacts of your lists, at the pace you set.'}
        </EmptyState>
      ) : (
        <>
          <ScrollTable label="Campaigns" minWidth={560} striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Pace</Table.Th>
                <Table.Th>Started</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {campaigns.data.campaigns.map((campaign) => (
                <Table.Tr key={campaign.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/campaigns/${campaign.id}`}>
                      {campaign.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Badge color={CAMPAIGN_COLORS[campaign.status]}>{campaign.status}</Badge>
                  </Table.Td>
                  <Table.Td>
                    {campaign.callsPerMinute}/min, {campaign.maxConcurrency} at once
                  </Table.Td>
                  <Table.Td>{formatDateTime(campaign.startedAt)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </ScrollTable>
          <ListFooter
            total={campaigns.data.total}
            noun="campaign"
            pageSize={PAGE_SIZE}
            page={page}
            onPage={(value) => setParams({ ...(status ? { status } : {}), page: String(value) })}
          />
        </>
      )}
    </>
  );
}
