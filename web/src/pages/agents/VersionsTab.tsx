/**
 * The Versions tab of the agent editor: every saved version, and the prompt parts that changed between any two of
 * them, line by line. Added and removed lines are marked with a sign and a hidden label as well as a colour.
 */
import { Alert, Button, Group, Select, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { diffLines } from 'diff';
import { useState } from 'react';
import { api, type Schemas, unwrap } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, Loading } from '../../ui/states';
import { type Part, PARTS } from './parts';

type VersionParts = Schemas['AgentVersion']['parts'];
type LineKind = 'added' | 'removed' | 'same';
interface Line {
  kind: LineKind;
  text: string;
}
/** A run of unchanged lines folded away, with how many there are. */
type Row = Line | { kind: 'folded'; count: number };

/** Unchanged lines kept on each side of a change. */
const CONTEXT = 2;
/** Version 0 stands for the empty agent before its first version: comparing with it shows everything as added. */
const EMPTY = 0;
const LABELS: Record<Part, string> = Object.fromEntries(PARTS.map(([part, label]) => [part, label])) as Record<
  Part,
  string
>;

const withNewline = (text: string) => (text === '' || text.endsWith('\n') ? text : `${text}\n`);

/** The lines of two texts, each marked added, removed or the same (jsdiff's line diff). */
export function lineDiff(before: string, after: string): Line[] {
  const lines: Line[] = [];
  for (const change of diffLines(withNewline(before), withNewline(after))) {
    const kind: LineKind = change.added ? 'added' : change.removed ? 'removed' : 'same';
    for (const text of change.value.replace(/\n$/, '').split('\n')) lines.push({ kind, text });
  }
  return lines;
}

/** Long runs of unchanged lines folded to their count, keeping CONTEXT lines next to each change. */
function fold(lines: Line[]): Row[] {
  const rows: Row[] = [];
  let same: Line[] = [];
  const flush = (atEnd: boolean) => {
    const keepBefore = rows.length === 0 ? 0 : CONTEXT;
    const keepAfter = atEnd ? 0 : CONTEXT;
    if (same.length > keepBefore + keepAfter + 1) {
      rows.push(...same.slice(0, keepBefore), { kind: 'folded', count: same.length - keepBefore - keepAfter });
      rows.push(...same.slice(same.length - keepAfter));
    } else rows.push(...same);
    same = [];
  };
  for (const line of lines) {
    if (line.kind === 'same') same.push(line);
    else {
      flush(false);
      rows.push(line);
    }
  }
  flush(true);
  return rows;
}

const MARKS: Record<LineKind, { sign: string; label: string; background?: string }> = {
  added: { sign: '+', label: 'Added: ', background: 'var(--mantine-color-green-light)' },
  removed: { sign: '−', label: 'Removed: ', background: 'var(--mantine-color-red-light)' },
  same: { sign: ' ', label: '' },
};

function PartDiff({ label, before, after }: { label: string; before: string; after: string }) {
  const lines = lineDiff(before, after);
  const added = lines.filter((line) => line.kind === 'added').length;
  const removed = lines.filter((line) => line.kind === 'removed').length;
  return (
    <section aria-label={`Changes to ${label}`}>
      <Title order={3} size="h5">
        {label}
      </Title>
      <Text size="sm" c="dimmed" mb={4}>
        {added} {added === 1 ? 'line' : 'lines'} added, {removed} removed
      </Text>
      <ul
        style={{
          listStyle: 'none',
          margin: 0,
          padding: 0,
          fontFamily: 'var(--mantine-font-family-monospace)',
          fontSize: 'var(--mantine-font-size-sm)',
          border: '1px solid var(--mantine-color-default-border)',
          borderRadius: 'var(--mantine-radius-sm)',
        }}
      >
        {fold(lines).map((row, i) =>
          row.kind === 'folded' ? (
            <li key={i} style={{ padding: '2px 8px', color: 'var(--mantine-color-dimmed)' }}>
              … {row.count} unchanged {row.count === 1 ? 'line' : 'lines'}
            </li>
          ) : (
            <li
              key={i}
              style={{
                display: 'flex',
                gap: 8,
                padding: '0 8px',
                background: MARKS[row.kind].background,
                whiteSpace: 'pre-wrap',
                overflowWrap: 'anywhere',
              }}
            >
              <span aria-hidden style={{ flex: 'none', width: '1ch', fontWeight: 700 }}>
                {MARKS[row.kind].sign}
              </span>
              <span style={{ minWidth: 0 }}>
                {MARKS[row.kind].label && <span className="visually-hidden">{MARKS[row.kind].label}</span>}
                {row.text || ' '}
              </span>
            </li>
          ),
        )}
      </ul>
    </section>
  );
}

function useVersion(agentId: string, version: number) {
  return useQuery({
    queryKey: ['agent-version', agentId, version],
    enabled: version !== EMPTY,
    queryFn: () =>
      unwrap(api.GET('/v1/agents/{id}/versions/{version}', { params: { path: { id: agentId, version } } })),
  });
}

const emptyParts = Object.fromEntries(PARTS.map(([part]) => [part, ''])) as VersionParts;

/** The parts that differ between two versions, each as a line diff. */
function Comparison({
  agentId,
  from,
  to,
  current,
  onRestore,
}: {
  agentId: string;
  from: number;
  to: number;
  /** The agent's version now: putting it back in the editor would change nothing. */
  current: number;
  onRestore: (version: number, parts: VersionParts) => void;
}) {
  const before = useVersion(agentId, from);
  const after = useVersion(agentId, to);
  const failed = before.error ?? after.error;
  if (failed)
    return (
      <ErrorState
        error={failed}
        retry={() => {
          void before.refetch();
          void after.refetch();
        }}
      />
    );
  if ((from !== EMPTY && !before.data) || !after.data) return <Loading label="Loading the versions" />;
  const old = from === EMPTY ? emptyParts : (before.data?.parts ?? emptyParts);
  const changed = PARTS.filter(([part]) => old[part] !== after.data.parts[part]);
  const title = `${from === EMPTY ? 'The empty agent' : `Version ${from}`} against version ${to}`;
  return (
    <Stack gap="md" aria-label={title} component="section">
      <Group justify="space-between" wrap="wrap">
        <Title order={2} size="h4">
          {title}
        </Title>
        {to !== current && (
          <Button size="xs" variant="default" onClick={() => onRestore(to, after.data.parts)}>
            Put version {to} in the editor
          </Button>
        )}
      </Group>
      {changed.length === 0 ? (
        <Text>The prompt parts are the same in both.</Text>
      ) : (
        changed.map(([part]) => (
          <PartDiff key={part} label={LABELS[part]} before={old[part]} after={after.data.parts[part]} />
        ))
      )}
    </Stack>
  );
}

export function VersionsTab({
  agentId,
  current,
  onRestore,
}: {
  agentId: string;
  current: number;
  onRestore: (version: number, parts: VersionParts) => void;
}) {
  const [pair, setPair] = useState<{ from: number; to: number } | null>(null);
  const versions = useQuery({
    queryKey: ['agent-versions', agentId],
    queryFn: () =>
      unwrap(api.GET('/v1/agents/{id}/versions', { params: { path: { id: agentId }, query: { limit: 100 } } })),
  });
  if (versions.isPending) return <Loading label="Loading versions" />;
  if (versions.error) return <ErrorState error={versions.error} retry={() => versions.refetch()} />;
  const list = versions.data.versions;
  const newest = list[0];
  if (!newest) return <EmptyState title="No versions saved yet" />;
  const previous = (version: number) => list.find((v) => v.version < version)?.version ?? EMPTY;
  // By default the newest version against the one before it.
  const shown = pair ?? { to: newest.version, from: previous(newest.version) };
  const options = list.map((v) => ({
    value: String(v.version),
    label: `Version ${v.version} (${formatDateTime(v.createdAt)})`,
  }));
  const fromOptions = [...options, { value: String(EMPTY), label: 'The empty agent' }];
  return (
    <Stack gap="lg">
      <ScrollTable label="Versions" minWidth={480}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Version</Table.Th>
            <Table.Th>Saved</Table.Th>
            <Table.Th>Changed</Table.Th>
            <Table.Th>
              <span className="visually-hidden">Compare</span>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {list.map((version) => (
            <Table.Tr key={version.version}>
              <Table.Td>{version.version}</Table.Td>
              <Table.Td>{formatDateTime(version.createdAt)}</Table.Td>
              <Table.Td>{version.changedParts.map((part) => LABELS[part as Part] ?? part).join(', ') || '—'}</Table.Td>
              <Table.Td>
                <Button
                  size="xs"
                  variant="subtle"
                  onClick={() => setPair({ to: version.version, from: previous(version.version) })}
                  aria-pressed={shown.to === version.version && shown.from === previous(version.version)}
                >
                  Changes in version {version.version}
                </Button>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </ScrollTable>
      {versions.data.total > list.length && (
        <Alert color="gray">
          The {list.length} newest of {versions.data.total} versions are listed.
        </Alert>
      )}
      <Group align="flex-end" wrap="wrap" gap="sm">
        <Select
          label="Compare"
          data={fromOptions}
          value={String(shown.from)}
          onChange={(value) => value !== null && setPair({ ...shown, from: Number(value) })}
          allowDeselect={false}
          w={{ base: '100%', sm: 280 }}
        />
        <Select
          label="With"
          data={options}
          value={String(shown.to)}
          onChange={(value) => value !== null && setPair({ ...shown, to: Number(value) })}
          allowDeselect={false}
          w={{ base: '100%', sm: 280 }}
        />
      </Group>
      <Comparison agentId={agentId} from={shown.from} to={shown.to} current={current} onRestore={onRestore} />
    </Stack>
  );
}
