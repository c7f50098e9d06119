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
  const events: string[] = [];

  function onLine(line: string) {
    if (line === '') {
      if (data.length) events.push(data.join('\n'));
      data = [];
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data') return;
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* space */) value = value.slice(1);
    data.push(value);
  }

  /** Feeds the complete lines of the buffer to onLine; keeps an unfinished last line. */
  function takeLines(final: boolean) {
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
      onLine(line);
    }
    buffer = buffer.slice(start);
  }

  for await (const chunk of body) {
    let text = decoder.decode(chunk, { stream: true });
    if (skipLeadingLf && text) {
      skipLeadingLf = false;
      if (text.charCodeAt(0) === 10) text = text.slice(1);
    }
    buffer += text;
    takeLines(false);
    for (const event of events) yield event;
    events.length = 0;
  }
  buffer += decoder.decode();
  takeLines(true);
  // A last event without its blank line still counts.
  if (buffer) onLine(buffer);
  if (data.length) events.push(data.join('\n'));
  for (const event of events) yield event;
}
