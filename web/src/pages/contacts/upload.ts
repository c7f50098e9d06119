/**
 * The CSV import as an XMLHttpRequest, the one browser API that reports upload progress (fetch does not). It asks
 * for a background import (Prefer: respond-async): the server answers 202 with the list once the file is received,
 * and the page then follows the list's import progress. A server that answers 200 has imported the file already.
 */
import { ApiError, CSRF_HEADER, CSRF_VALUE, type ErrorBody, type Operations, type Schemas } from '../../api/client';

export type ImportResult = Schemas['ContactImportResult'];
export type ImportingList = Schemas['ContactList'];
/** The import's answer: the report (imported while the request waited), or the list importing in the background. */
export type ImportAnswer = { kind: 'done'; result: ImportResult } | { kind: 'started'; list: ImportingList };
export type ImportQuery = Operations['importContactList']['parameters']['query'];

export type UploadProgress = { phase: 'uploading'; sent: number; total: number } | { phase: 'processing' };

function errorOf(xhr: XMLHttpRequest): ApiError {
  let body: ErrorBody | null = null;
  try {
    const parsed = JSON.parse(xhr.responseText) as unknown;
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { error?: unknown }).error === 'string')
      body = parsed as ErrorBody;
  } catch {
    // Not the service's error body (a proxy's page): the status says enough.
  }
  return new ApiError(xhr.status, body);
}

export function uploadContactCsv(
  file: File,
  query: ImportQuery,
  onProgress: (progress: UploadProgress) => void,
  signal?: AbortSignal,
): Promise<ImportAnswer> {
  const params = new URLSearchParams(
    Object.entries(query).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== ''),
  );
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/api/v1/contact-lists?${params}`);
    xhr.setRequestHeader('Content-Type', 'text/csv');
    xhr.setRequestHeader(CSRF_HEADER, CSRF_VALUE);
    xhr.setRequestHeader('Prefer', 'respond-async');
    xhr.upload.onprogress = (event) =>
      onProgress({ phase: 'uploading', sent: event.loaded, total: event.lengthComputable ? event.total : file.size });
    xhr.upload.onload = () => onProgress({ phase: 'processing' });
    xhr.onload = () => {
      if (xhr.status === 202) resolve({ kind: 'started', list: JSON.parse(xhr.responseText) as ImportingList });
      else if (xhr.status >= 200 && xhr.status < 300)
        resolve({ kind: 'done', result: JSON.parse(xhr.responseText) as ImportResult });
      else reject(errorOf(xhr));
    };
    xhr.onerror = () => reject(new Error('The upload failed: the connection to the server was lost.'));
    xhr.onabort = () => reject(new DOMException('The import was cancelled.', 'AbortError'));
    signal?.addEventListener('abort', () => xhr.abort());
    onProgress({ phase: 'uploading', sent: 0, total: file.size });
    xhr.send(file);
  });
}

/** Data rows in a CSV file (lines after the header, blank ones left out): about what the import will count. */
export async function countDataRows(file: File): Promise<number> {
  let rows = 0;
  let lineHasText = false;
  let header = true;
  const reader = file.stream().pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    for (let i = 0; i < value.length; i++) {
      const char = value.charCodeAt(i);
      if (char === 10) {
        if (lineHasText) {
          if (header) header = false;
          else rows++;
        }
        lineHasText = false;
      } else if (char !== 13 && char !== 32 && char !== 44) lineHasText = true;
    }
  }
  if (lineHasText && !header) rows++;
  return rows;
}
