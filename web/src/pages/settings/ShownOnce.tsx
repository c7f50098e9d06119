/**
 * A secret the API shows in one answer only (an API key, a webhook signing secret): shown here with a copy button
 * and a warning, until the user says they kept it. Nothing stores it; leaving the page loses it.
 */
import { Alert, Button, CopyButton, Group, Stack, Text, TextInput } from '@mantine/core';

export function ShownOnce({
  title,
  label,
  value,
  onDone,
}: {
  title: string;
  label: string;
  value: string;
  onDone: () => void;
}) {
  return (
    <Alert color="yellow" title={title} role="status" my="md">
      <Stack gap="xs">
        <Text size="sm">This is the only time it is shown: copy it now and keep it somewhere safe.</Text>
        <TextInput label={label} value={value} readOnly ff="monospace" onFocus={(e) => e.currentTarget.select()} />
        <Group gap="sm">
          <CopyButton value={value}>
            {({ copied, copy }) => (
              <Button size="xs" color={copied ? 'teal.9' : 'blue'} onClick={copy}>
                {copied ? 'Copied' : `Copy the ${label.toLowerCase()}`}
              </Button>
            )}
          </CopyButton>
          <Button size="xs" variant="default" onClick={onDone}>
            I have kept it
          </Button>
        </Group>
      </Stack>
    </Alert>
  );
}
