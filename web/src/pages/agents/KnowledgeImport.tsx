/**
 * A PDF's text into the agent's knowledge base (POST /v1/kb/import-pdf, multipart). The server saves it as a new
 * version at once and indexes it; the editor then shows the saved text. A refusal (too large, not a PDF, a scan
 * without text, too complex) is shown beside the file input.
 */
import { Alert, Button, Group, Input, Radio, Stack, Text, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { api, ApiError, type Schemas, unwrap } from '../../api/client';
import { FormError } from '../../ui/states';

type Result = Schemas['ImportKnowledgeBasePdfResponse'];
type Mode = Result['mode'];

/** What the API says about the file: its field error, or the refusal that concerns the file as a whole. */
function fileError(error: unknown): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const fields = error.fieldErrors;
  if (fields['body/file']) return fields['body/file'];
  if (
    ['validation_failed', 'payload_too_large', 'unsupported_media_type'].includes(error.code) &&
    !fields['body/agentId']
  )
    return error.message;
  return undefined;
}

export function KnowledgeImport({
  agentId,
  blocked,
  onImported,
}: {
  agentId: string;
  /** Why importing must wait (unsaved edits the saved version would drop), or null. */
  blocked: string | null;
  onImported: (result: Result) => void;
}) {
  const id = useId();
  const [file, setFile] = useState<File | null>(null);
  const [mode, setMode] = useState<Mode>('append');
  const upload = useMutation({
    mutationFn: (pdf: File) => {
      const form = new FormData();
      form.append('agentId', agentId);
      form.append('mode', mode);
      form.append('file', pdf, pdf.name);
      // openapi-fetch sends a FormData body as it is: the browser sets the multipart boundary.
      return unwrap(api.POST('/v1/kb/import-pdf', { body: form }));
    },
    onSuccess: onImported,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (file) upload.mutate(file);
  };
  const error = fileError(upload.error);
  return (
    <form onSubmit={submit} aria-labelledby={`${id}-title`}>
      <Stack gap="sm" maw={640}>
        <Title order={2} size="h5" id={`${id}-title`}>
          Import a PDF
        </Title>
        <Input.Wrapper
          id={`${id}-file`}
          label="PDF file"
          description="Its text is read page by page and saved as a new version. Scans without a text layer cannot be read."
          error={error}
          errorProps={{ id: `${id}-error` }}
          descriptionProps={{ id: `${id}-description` }}
        >
          <input
            id={`${id}-file`}
            type="file"
            accept="application/pdf,.pdf"
            aria-describedby={`${id}-description${error ? ` ${id}-error` : ''}`}
            aria-invalid={Boolean(error)}
            style={{ display: 'block', marginTop: 4, maxWidth: '100%' }}
            onChange={(e) => {
              setFile(e.currentTarget.files?.[0] ?? null);
              upload.reset();
            }}
          />
        </Input.Wrapper>
        <Radio.Group label="The imported text" value={mode} onChange={(value) => setMode(value as Mode)}>
          <Group mt={4}>
            <Radio value="append" label="Add after the current knowledge" />
            <Radio value="replace" label="Replace the current knowledge" />
          </Group>
        </Radio.Group>
        {blocked && (
          <Text size="sm" c="dimmed">
            {blocked}
          </Text>
        )}
        {!error && <FormError error={upload.error} title="Not imported" />}
        {upload.data && (
          <Alert color="teal" role="status">
            Imported {upload.data.pages} {upload.data.pages === 1 ? 'page' : 'pages'} ({upload.data.characters}{' '}
            characters): saved as version {upload.data.version}, {upload.data.chunks} chunks indexed.
          </Alert>
        )}
        <Group>
          <Button type="submit" variant="default" disabled={!file || Boolean(blocked)} loading={upload.isPending}>
            Import the PDF
          </Button>
          {upload.isPending && (
            <Text size="sm" role="status">
              Reading the PDF…
            </Text>
          )}
        </Group>
      </Stack>
    </form>
  );
}
