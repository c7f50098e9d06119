/** The account's agents: name, status, version, last call; paged. */
import { Anchor, Badge, Button, Table } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { formatDateTime, STATUS_COLORS } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, Loading, PageHeader } from '../../ui/states';
import { ListFooter } from '../../ui/ListFooter';

const PAGE_SIZE = 25;

export function Component() {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const agents = useQuery({
    queryKey: ['agents', page],
    queryFn: () =>
      unwrap(api.GET('/v1/agents', { params: { query: { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE } } })),
    placeholderData: keepPreviousData,
  });
  const newButton = (
    <Button component={Link} to="/agents/new">
      New agent
    </Button>
  );
  return (
    <>
      <PageHeader title="Agents">{newButton}</PageHeader>
      {agents.isPending ? (
        <Loading label="Loading agents" />
      ) : agents.error ? (
        <ErrorState error={agents.error} retry={() => agents.refetch()} />
      ) : agents.data.total === 0 ? (
        <EmptyState title="No agents yet" action={newButton}>
          An agent is who speaks on your calls: create one from a template.
        </EmptyState>
      ) : (
        <>
          <ScrollTable label="Agents" minWidth={560} striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Version</Table.Th>
                <Table.Th>Last call</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {agents.data.agents.map((agent) => (
                <Table.Tr key={agent.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/agents/${agent.id}`}>
                      {agent.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Badge color={STATUS_COLORS[agent.status]}>{agent.status}</Badge>
                  </Table.Td>
                  <Table.Td>{agent.version}</Table.Td>
                  <Table.Td>{formatDateTime(agent.lastCallAt)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </ScrollTable>
          <ListFooter
            total={agents.data.total}
            noun="agent"
            pageSize={PAGE_SIZE}
            page={page}
            onPage={(value) => setParams({ page: String(value) })}
          />
        </>
      )}
    </>
  );
}
