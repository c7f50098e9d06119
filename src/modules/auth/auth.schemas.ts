import { Type, type Static } from 'typebox';
import { MEMBER_ROLES } from '../../lib/permissions.js';
import { Int, Nullable, SingleLineText, Uuid } from '../../http/schemas.js';

const Email = Type.String({ format: 'email', maxLength: 254 });
// NIST 800-63B: at least 8 characters; the upper bound keeps argon2 input sane.
const Password = Type.String({ minLength: 8, maxLength: 256 });
const Role = Type.Enum([...MEMBER_ROLES]);

export const RegisterBody = Type.Object(
  {
    email: Email,
    password: Password,
    name: Type.Optional(SingleLineText({ minLength: 1, maxLength: 200 })),
    accountName: Type.Optional(SingleLineText({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type RegisterInput = Static<typeof RegisterBody>;

export const LoginBody = Type.Object(
  { email: Email, password: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);
export type LoginInput = Static<typeof LoginBody>;

export const AccountSummary = Type.Object({ id: Uuid, name: Type.String(), role: Role }, { title: 'AccountSummary' });

export const MeBody = Type.Object(
  {
    user: Nullable(
      Type.Object({ id: Uuid, email: Type.String(), name: Nullable(Type.String()), isPlatformAdmin: Type.Boolean() }),
    ),
    account: AccountSummary,
    accounts: Type.Array(AccountSummary, { description: 'Every account the signed-in user belongs to.' }),
    scheme: Type.Union([Type.Literal('api_key'), Type.Literal('session')]),
    apiKeyId: Nullable(Uuid),
  },
  { title: 'Me' },
);

export const SessionStartedBody = Type.Object(
  {
    userId: Uuid,
    accountId: Uuid,
    expiresAt: Type.String({ format: 'date-time' }),
  },
  { title: 'SessionStarted' },
);

export const SwitchAccountBody = Type.Object({ accountId: Uuid }, { additionalProperties: false });
export const SwitchedAccountBody = Type.Object({ accountId: Uuid, role: Role }, { title: 'AccountSwitched' });

export const ChangePasswordBody = Type.Object(
  { currentPassword: Type.String({ minLength: 1, maxLength: 256 }), newPassword: Password },
  { additionalProperties: false },
);
export const PasswordChangedBody = Type.Object(
  {
    ok: Type.Literal(true),
    revokedSessions: Type.Integer({ description: 'Other sessions signed out by the change.' }),
  },
  { title: 'PasswordChanged' },
);

export const RecentSessionsQuery = Type.Object(
  { limit: Int({ minimum: 1, maximum: 100, default: 20 }) },
  { additionalProperties: false },
);
export const SessionList = Type.Object(
  {
    sessions: Type.Array(
      Type.Object({
        id: Uuid,
        ip: Nullable(Type.String()),
        userAgent: Nullable(Type.String()),
        createdAt: Type.String({ format: 'date-time' }),
        lastSeenAt: Type.String({ format: 'date-time' }),
        expiresAt: Type.String({ format: 'date-time' }),
        revokedAt: Nullable(Type.String({ format: 'date-time' })),
        active: Type.Boolean(),
        current: Type.Boolean({ description: 'This is the session making the request.' }),
      }),
    ),
  },
  { title: 'SessionPage' },
);
export const RevokedBody = Type.Object(
  { revoked: Type.Integer({ description: 'Sessions signed out.' }) },
  { title: 'SessionsRevoked' },
);
