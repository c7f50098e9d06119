import { Type, type Static } from 'typebox';
import { Uuid } from '../../http/schemas.js';

export const IMPORT_MODES = ['append', 'replace'] as const;

/** The form fields of an import besides the file, checked once the multipart body is read. */
export const ImportPdfFields = Type.Object(
  { agentId: Uuid, mode: Type.Enum([...IMPORT_MODES], { default: 'append' }) },
  { additionalProperties: false },
);
export type ImportPdfFields = Static<typeof ImportPdfFields>;

export const ImportPdfBody = {
  content: {
    'multipart/form-data': {
      schema: Type.Unknown({
        description:
          'Form fields: file (the PDF), agentId (the agent whose knowledge base receives the text), mode (append, the ' +
          'default, adds the text after the current knowledge base; replace puts it in its place).',
      }),
    },
  },
};

export const ImportPdfResult = Type.Object({
  agentId: Uuid,
  version: Type.Integer({ minimum: 1, description: 'The agent version that holds the imported text.' }),
  mode: Type.Enum([...IMPORT_MODES]),
  pages: Type.Integer({ minimum: 1 }),
  characters: Type.Integer({ minimum: 1, description: 'Characters of text taken from the PDF.' }),
  chunks: Type.Integer({ minimum: 0, description: 'Chunks of the knowledge base as now indexed.' }),
});
