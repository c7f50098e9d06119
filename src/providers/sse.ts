/**
 * Server-sent events: yields the data of each event of a byte stream, as the EventSource rules read it
 * (lines end in LF, CRLF or CR; "data:" lines of one event are joined with LF; comments and other fields
 * are skipped; a blank line ends an event). Only what the OpenAI streaming protocol uses.
 */
export async function* sseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let data: string[] = [];
  // A CR at the end of a chunk may be the first half of a CRLF split across chunks.
  let skipLeadingLf = false;

  function* takeLines(final: boolean): Generator<string> {
    let start = 0;
    for (let i = 0; i < buffer.length; i++) {
      const char = buffer.charCodeAt(i);
      if (char !== 10 && char !== 13) continue;
      const line = buffer.slice(start, i);
      if (char === 13) {
        if (i + 1 < buffer.length) {
          if (buffer.charCodeAt(i + 1) === 10) i++;
        } else if (!final) {
          skipLeadingLf = true;
        }
      }
      start = i + 1;
      yield line;
    }
    buffer = buffer.slice(start);
  }

  function* onLine(line: string): Generator<string> {
    if (line === '') {
      if (data.length) yield data.join('\n');
      data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data') return;
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    data.push(value);
  }

  for await (const chunk of body) {
    let text = decoder.decode(chunk, { stream: true });
    if (skipLeadingLf && text) {
      skipLeadingLf = false;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    buffer += text;
    for (const line of takeLines(false)) yield* onLine(line);
  }
  buffer += decoder.decode();
  for (const line of takeLines(true)) yield* onLine(line);
  // A last event without its blank line still counts.
  if (buffer) yield* onLine(buffer);
  if (data.length) yield data.join('\n');
}
