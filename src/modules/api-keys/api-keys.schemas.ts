import { Type, type Static } from 'typebox';
import { DateTime, Nullable, PageFields, SingleLineText, Uuid } from '../../http/schemas.js';

export const CreateApiKeyBody = Type.Object(
  { name: SingleLineText({ minLength: 1, maxLength: 100, description: 'What the key is for, e.g. "CRM sync".' }) },
  { additionalProperties: false },
);
export type CreateApiKeyInput = Static<typeof CreateApiKeyBody>;

export const ApiKey = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    displayPrefix: Type.String({ description: 'The first characters of the key, to tell keys apart.' }),
    createdAt: DateTime,
    lastUsedAt: Nullable(DateTime),
  },
  { title: 'ApiKey', description: 'An API key, without the key itself.' },
);

export const CreatedApiKey = Type.Object(
  {
    ...ApiKey.properties,
    key: Type.String({ description: 'The full key. Shown only in this response; store it now.' }),
  },
  { title: 'CreatedApiKey', description: 'A new API key, with the key itself: the only time it is shown.' },
);

export const ApiKeyList = Type.Object({ apiKeys: Type.Array(ApiKey), ...PageFields }, { title: 'ApiKeyPage' });
