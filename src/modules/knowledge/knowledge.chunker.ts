/**
 * Splits a knowledge base into chunks of about CHUNK_TOKENS tokens: first on markdown headings (each chunk knows the
 * headings above it), then on paragraphs, then, for a paragraph too long alone, on sentences and finally on words.
 * Consecutive chunks of one section overlap by about OVERLAP_TOKENS, so a fact cut at a boundary is whole in one of them.
 */
import { CHARS_PER_TOKEN, estimateTokens } from '../../providers/llm/index.js';

export const CHUNK_TOKENS = 500;
export const OVERLAP_TOKENS = 60;

export interface KnowledgeChunk {
  seq: number;
  /** The headings above the chunk, outermost first, joined with " > ". */
  heading: string;
  content: string;
  tokens: number;
}

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;

interface Section {
  heading: string;
  paragraphs: string[];
}

function sections(text: string): Section[] {
  const result: Section[] = [];
  const path: string[] = [];
  let current: Section = { heading: '', paragraphs: [] };
  let paragraph: string[] = [];
  let inFence = false;
  const endParagraph = () => {
    const joined = paragraph.join('\n').trim();
    if (joined) current.paragraphs.push(joined);
    paragraph = [];
  };
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const heading = inFence ? null : HEADING.exec(line);
    if (heading) {
      endParagraph();
      if (current.paragraphs.length) result.push(current);
      const level = heading[1]!.length;
      path.length = Math.min(path.length, level - 1);
      while (path.length < level - 1) path.push('');
      path.push(heading[2]!.trim());
      current = { heading: path.filter(Boolean).join(' > '), paragraphs: [] };
    } else if (!inFence && line.trim() === '') {
      endParagraph();
    } else {
      paragraph.push(line);
    }
  }
  endParagraph();
  if (current.paragraphs.length) result.push(current);
  return result;
}

/** Pieces of at most `maxChars`: sentences where possible, whole words otherwise. */
function splitLong(paragraph: string, maxChars: number): string[] {
  if (paragraph.length <= maxChars) return [paragraph];
  const sentences = paragraph.match(/[^.!?\n]+(?:[.!?]+["”')\]]*|\n|$)\s*/g) ?? [paragraph];
  const pieces: string[] = [];
  let piece = '';
  const push = () => {
    if (piece.trim()) pieces.push(piece.trim());
    piece = '';
  };
  for (const sentence of sentences) {
    if (sentence.length > maxChars) {
      push();
      let rest = sentence;
      while (rest.length > maxChars) {
        const cut = rest.lastIndexOf(' ', maxChars);
        const at = cut > maxChars / 2 ? cut : maxChars;
        pieces.push(rest.slice(0, at).trim());
        rest = rest.slice(at);
      }
      piece = rest;
    } else if (piece.length + sentence.length > maxChars) {
      push();
      piece = sentence;
    } else {
      piece += sentence;
    }
  }
  push();
  return pieces;
}

/** The end of a chunk, from a sentence or word start, about `chars` long: what the next chunk repeats. */
function tail(text: string, chars: number): string {
  if (text.length <= chars) return text;
  const start = text.length - chars;
  const sentence = text.slice(start).search(/[.!?]\s+\S/);
  if (sentence >= 0) return text.slice(start + sentence + 1).trim();
  const space = text.indexOf(' ', start);
  return (space < 0 ? text.slice(start) : text.slice(space)).trim();
}

export function chunkKnowledge(
  text: string,
  options: { chunkTokens?: number; overlapTokens?: number } = {},
): KnowledgeChunk[] {
  const maxChars = (options.chunkTokens ?? CHUNK_TOKENS) * CHARS_PER_TOKEN;
  const overlapChars = (options.overlapTokens ?? OVERLAP_TOKENS) * CHARS_PER_TOKEN;
  const chunks: KnowledgeChunk[] = [];
  for (const section of sections(text)) {
    const pieces = section.paragraphs.flatMap((paragraph) => splitLong(paragraph, maxChars - overlapChars));
    let body = '';
    let fresh = false;
    const flush = () => {
      if (!fresh) return;
      chunks.push({
        seq: chunks.length,
        heading: section.heading,
        content: body,
        tokens: estimateTokens(section.heading) + estimateTokens(body),
      });
      body = tail(body, overlapChars);
      fresh = false;
    };
    for (const piece of pieces) {
      if (fresh && body.length + 2 + piece.length > maxChars) flush();
      body = body ? `${body}\n\n${piece}` : piece;
      fresh = true;
    }
    flush();
  }
  return chunks;
}
