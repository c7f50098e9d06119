/**
 * The account's audit log, newest first: every change to agents, API keys, contacts, lists and the do-not-call list,
 * with who made it; filtered by event type and by the changed resource's id (kept in the address, so a filtered
 * view can be linked).
 */
import { Button, Code, Group, NativeSelect, Table, Text, TextInput } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, fieldError, type Schemas, unwrap } from '../../api/client';
import { formatDateTime, humanize } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, Loading, PageHeader } from '../../ui/states';
import { ListFooter } from '../../ui/ListFooter';

type AuditEvent = Schemas['AuditEvent'];
type AuditType = AuditEvent['type'];
const PAGE_SIZE = 50;

const AUDIT_TYPES = [
  'agent.created',
  'agent.updated',
  'agent.deleted',
  'api_key.created',
  'api_key.deleted',
  'contact_list.imported',
  'contact.updated',
  'dnc.added',
  'dnc.removed',
  'call.queued',
  'call.connected',
  'call.completed',
  'call.failed',
  'call.disposition_set',
  'call.test_placed',
  'phone_number.added',
  'phone_number.purchased',
  'phone_number.assigned',
  'phone_number.released',
  'disposition_code.created',
  'disposition_code.updated',
  'disposition_code.deleted',
  'campaign.started',
  'campaign.compliance_paused',
] as const satisfies readonly AuditType[];
// A type the API adds and this list lacks fails the build here, rather than being impossible to filter by.
type Unlisted = Exclude<AuditType, (typeof AUDIT_TYPES)[number]>;
const everyTypeListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyTypeListed;

function actorOf(event: AuditEvent) {
  if (!event.actor) return 'the system';
  if (event.actor.apiKeyId) return `API key ${event.actor.apiKeyId.slice(0, 8)}`;
  if (event.actor.userId) return `user ${event.actor.userId.slice(0, 8)}`;
  return 'unknown';
}

export function Component() {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const type = (params.get('type') || undefined) as AuditType | undefined;
  const subjectId = params.get('subjectId') || undefined;
  const [subjectDraft, setSubjectDraft] = useState(subjectId ?? '');
  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    next.delete('page');
    setParams(next, { replace: true });
  };
  const events = useQuery({
    queryKey: ['audit-events', page, type, subjectId],
    queryFn: () =>
      unwrap(
        api.GET('/v1/audit-events', {
          params: { query: { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE, type, subjectId } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const applySubject = (event: FormEvent) => {
    event.preventDefault();
    setFilter('subjectId', subjectDraft.trim());
  };
  const filtered = Boolean(type || subjectId);
  return (
    <>
      <PageHeader title="Audit log" />
      <Group align="flex-end" mb="md" wrap="wrap">
        <NativeSelect
          label="Event type"
          value={type ?? ''}
          onChange={(e) => setFilter('type', e.currentTarget.value)}
          data={[{ value: '', label: 'Every type' }, ...AUDIT_TYPES]}
        />
        <Group component="form" onSubmit={applySubject} align="flex-end" gap="xs" wrap="nowrap">
          <TextInput
            label="Resource id"
            description="The changed resource's id, or a phone number"
            value={subjectDraft}
            onChange={(e) => setSubjectDraft(e.currentTarget.value)}
            error={fieldError(events.error, 'querystring/subjectId')}
            maxLength={64}
          />
          <Button type="submit" variant="default">
            Filter
          </Button>
        </Group>
        {filtered && (
          <Button
            variant="subtle"
            onClick={() => {
              setSubjectDraft('');
              setParams({}, { replace: true });
            }}
          >
            Clear filters
          </Button>
        )}
      </Group>
      {events.isPending ? (
        <Loading label="Loading the audit log" />
      ) : events.error ? (
        <ErrorState error={events.error} retry={() => events.refetch()} />
      ) : events.data.total === 0 ? (
        <EmptyState title={filtered ? 'Nothing matches these filters' : 'No changes recorded yet'}>
          {filtered ? 'Try another type or id.' : 'Changes to agents, keys, contacts and lists appear here.'}
        </EmptyState>
      ) : (
        <>
          <ScrollTable label="Audit events" minWidth={720} striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>When</Table.Th>
                <Table.Th>Event</Table.Th>
                <Table.Th>Resource</Table.Th>
                <Table.Th>By</Table.Th>
                <Table.Th>Details</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {events.data.auditEvents.map((event) => (
                <Table.Tr key={event.id}>
                  <Table.Td>{formatDateTime(event.occurredAt)}</Table.Td>
                  <Table.Td>
                    <Text size="sm" ff="monospace">
                      {event.type}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{humanize(event.subject.type)}</Text>
                    <Button
                      variant="subtle"
                      size="compact-xs"
                      onClick={() => {
                        setSubjectDraft(event.subject.id);
                        setFilter('subjectId', event.subject.id);
                      }}
                      aria-label={`Only changes of ${event.subject.id}`}
                    >
                      <Code>{event.subject.id}</Code>
                    </Button>
                  </Table.Td>
                  <Table.Td>{actorOf(event)}</Table.Td>
                  <Table.Td maw={320}>
                    {Object.keys(event.data).length > 0 && (
                      <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all', overflow: 'visible' }}>
                        {JSON.stringify(event.data, null, 1)}
                      </Code>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </ScrollTable>
          <ListFooter
            total={events.data.total}
            noun="event"
            pageSize={PAGE_SIZE}
            page={page}
            onPage={(value) => {
              const next = new URLSearchParams(params);
              next.set('page', String(value));
              setParams(next);
            }}
          />
        </>
      )}
    </>
  );
}
