/**
 * Import a CSV file as a new contact list: the upload's progress, then the import's own progress (rows processed and
 * the share done, from the list the server answers at once and imports in the background), then the report: counts
 * and the rows it could not import.
 */
import {
  Alert,
  Anchor,
  Button,
  Card,
  FileInput,
  Group,
  Loader,
  Progress,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { api, fieldError, unwrap } from '../../api/client';
import { humanize } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { ErrorState, FormError, PageHeader } from '../../ui/states';
import { countDataRows, type ImportResult, type ImportingList, type UploadProgress, uploadContactCsv } from './upload';

const POLICIES = [
  { value: 'skip', label: 'Keep the existing contact (skip)' },
  { value: 'update', label: 'Update it with the imported values' },
];

const formatBytes = (bytes: number) =>
  bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

function ImportReport({ result }: { result: ImportResult }) {
  const { counts } = result;
  const figures: Array<[string, number]> = [
    ['Rows in the file', counts.rows],
    ['Imported', counts.imported],
    ['Updated', counts.updated],
    ['Duplicates', counts.duplicates],
    ['Invalid', counts.invalid],
    ['On the do-not-call list', counts.dnc],
  ];
  return (
    <section aria-labelledby="report">
      <Title order={2} size="h3" id="report" mb="sm">
        Import report
      </Title>
      <Alert color={counts.invalid ? 'yellow' : 'green'} mb="md" role="status">
        {counts.imported + counts.updated} of {counts.rows} rows imported or updated
        {counts.invalid ? `; ${counts.invalid} could not be imported` : ''}.{' '}
        <Anchor component={Link} to={`/contacts/lists/${result.listId}`}>
          Open the list
        </Anchor>
      </Alert>
      <SimpleGrid cols={{ base: 2, sm: 3 }} mb="md">
        {figures.map(([label, value]) => (
          <Card key={label} withBorder padding="sm">
            <Text size="sm" c="dimmed">
              {label}
            </Text>
            <Text size="xl" fw={700}>
              {value.toLocaleString()}
            </Text>
          </Card>
        ))}
      </SimpleGrid>
      {result.errors.length > 0 && (
        <>
          <Title order={3} size="h4" mb="xs">
            Rows not imported{counts.invalid > result.errors.length ? ` (the first ${result.errors.length})` : ''}
          </Title>
          <ScrollTable label="Rows not imported" minWidth={480} striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Row</Table.Th>
                <Table.Th>Phone</Table.Th>
                <Table.Th>Reason</Table.Th>
                <Table.Th>Message</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {result.errors.map((error) => (
                <Table.Tr key={error.row}>
                  <Table.Td>{error.row}</Table.Td>
                  <Table.Td>{error.phone || '(empty)'}</Table.Td>
                  <Table.Td>{humanize(error.reason)}</Table.Td>
                  <Table.Td>{error.message}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </ScrollTable>
        </>
      )}
    </section>
  );
}

/** How often the page asks how far an import got. */
const POLL_MS = 500;

/** A list importing in the background: its progress while it processes, then its report, or why it failed. */
function ImportProgress({ started, onSettled }: { started: ImportingList; onSettled: () => void }) {
  const list = useQuery({
    queryKey: ['contact-list', started.id, 'import'],
    queryFn: () => unwrap(api.GET('/v1/contact-lists/{id}', { params: { path: { id: started.id } } })),
    refetchInterval: (query) => (query.state.data?.import.state === 'processing' ? POLL_MS : false),
  });
  const state = list.data?.import.state;
  const settled = state === 'completed' || state === 'failed' || list.isError;
  // The form is free again, and the lists page shows the new list, once the import is settled.
  useEffect(() => {
    if (settled) onSettled();
  }, [settled, onSettled]);
  if (list.isError) return <ErrorState error={list.error} title="The import's progress could not be read" />;
  const current = list.data ?? { ...started, errors: [] };
  if (current.import.state === 'completed')
    return <ImportReport result={{ listId: current.id, counts: current.counts, errors: current.errors }} />;
  if (current.import.state === 'failed')
    return (
      <Alert color="red" role="alert" title="The import failed: nothing was imported">
        {current.import.failure?.message ?? 'The import stopped before it completed.'}
      </Alert>
    );
  const percent = Math.round(100 * current.import.fraction);
  return (
    <Card withBorder>
      <Stack gap="xs">
        <Text role="status" aria-live="polite">
          Processing: {current.import.rowsProcessed.toLocaleString()} rows checked, {percent}% done
        </Text>
        <Progress value={percent} aria-label="Import progress" />
        <Text size="sm" c="dimmed">
          The server checks every row, then saves the contacts; you may leave this page, the list appears when it is
          done.
        </Text>
      </Stack>
    </Card>
  );
}

export function Component() {
  const queryClient = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const [name, setName] = useState('');
  const [country, setCountry] = useState('');
  const [policy, setPolicy] = useState<'skip' | 'update'>('skip');
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const [rows, setRows] = useState<number | null>(null);
  const [result, setResult] = useState<ImportResult | null>(null);
  const [started, setStarted] = useState<ImportingList | null>(null);
  const [processing, setProcessing] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [fileMissing, setFileMissing] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const busy = progress !== null || processing;
  const settle = useCallback(() => {
    setProcessing(false);
    void queryClient.invalidateQueries({ queryKey: ['contact-lists'] });
  }, [queryClient]);

  const chooseFile = (chosen: File | null) => {
    setFile(chosen);
    setFileMissing(false);
    setRows(null);
    if (chosen && !name) setName(chosen.name.replace(/\.(csv|txt)$/i, ''));
    if (chosen) void countDataRows(chosen).then(setRows, () => setRows(null));
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!file) {
      setFileMissing(true);
      return;
    }
    setError(null);
    setResult(null);
    setStarted(null);
    abort.current = new AbortController();
    try {
      const answer = await uploadContactCsv(
        file,
        { name: name.trim(), duplicatePolicy: policy, ...(country.trim() ? { defaultCountry: country.trim() } : {}) },
        setProgress,
        abort.current.signal,
      );
      if (answer.kind === 'started') {
        setProcessing(true);
        setStarted(answer.list);
      } else {
        setResult(answer.result);
        void queryClient.invalidateQueries({ queryKey: ['contact-lists'] });
      }
    } catch (failure) {
      setError(failure);
    } finally {
      setProgress(null);
      abort.current = null;
    }
  };

  const fields = ['querystring/name', 'querystring/defaultCountry', 'querystring/duplicatePolicy'];
  return (
    <>
      <PageHeader title="Import contacts">
        <Button component={Link} to="/contacts" variant="default">
          Contact lists
        </Button>
      </PageHeader>
      <Stack gap="xl">
        <Card withBorder>
          <form onSubmit={submit} aria-label="Import a CSV file">
            <Stack gap="sm">
              <FileInput
                label="CSV file"
                description="A header row, then one contact a row: phone (required), first name, last name, email, company, timezone; other columns are kept as attributes."
                accept=".csv,text/csv,text/plain"
                value={file}
                onChange={chooseFile}
                clearable
                clearButtonProps={{ 'aria-label': 'Remove the file' }}
                disabled={busy}
                error={fileMissing ? 'Choose a file to import' : undefined}
              />
              {file && (
                <Text size="sm" c="dimmed">
                  {file.name}: {formatBytes(file.size)}
                  {rows !== null ? `, about ${rows.toLocaleString()} data rows` : ''}
                </Text>
              )}
              <TextInput
                label="List name"
                required
                value={name}
                onChange={(e) => setName(e.currentTarget.value)}
                disabled={busy}
                error={fieldError(error, 'querystring/name')}
              />
              <SimpleGrid cols={{ base: 1, sm: 2 }}>
                <TextInput
                  label="Default country"
                  description="Two letters (US, GB, DE) for numbers written without a country code"
                  maxLength={2}
                  value={country}
                  onChange={(e) => setCountry(e.currentTarget.value.toUpperCase())}
                  disabled={busy}
                  error={fieldError(error, 'querystring/defaultCountry')}
                />
                <Select
                  label="A number already in your contacts"
                  data={POLICIES}
                  value={policy}
                  onChange={(value) => setPolicy(value === 'update' ? 'update' : 'skip')}
                  allowDeselect={false}
                  disabled={busy}
                  error={fieldError(error, 'querystring/duplicatePolicy')}
                />
              </SimpleGrid>
              <FormError error={error} fields={fields} />
              <Group>
                <Button type="submit" loading={busy}>
                  Import
                </Button>
                {progress !== null && (
                  <Button variant="default" onClick={() => abort.current?.abort()}>
                    Cancel
                  </Button>
                )}
              </Group>
            </Stack>
          </form>
        </Card>
        {progress && (
          <Card withBorder aria-live="polite" role="status">
            {progress.phase === 'uploading' ? (
              <Stack gap="xs">
                <Text>
                  Uploading: {formatBytes(progress.sent)} of {formatBytes(progress.total)}
                </Text>
                <Progress
                  value={progress.total ? (100 * progress.sent) / progress.total : 0}
                  aria-label="Upload progress"
                />
              </Stack>
            ) : (
              <Group gap="sm">
                <Loader size="sm" aria-hidden />
                <Text>
                  Uploaded; the server checks the start of the file
                  {rows !== null ? ` (about ${rows.toLocaleString()} rows)` : ''}.
                </Text>
              </Group>
            )}
          </Card>
        )}
        {started && <ImportProgress key={started.id} started={started} onSettled={settle} />}
        {result && <ImportReport result={result} />}
      </Stack>
    </>
  );
}
