import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { SafetyService } from './safety.service.js';
import { SafetyCheckBody, SafetyReport } from './safety.schemas.js';

export function safetyRoutes(app: App, { safety }: { safety: SafetyService }) {
  app.post(
    '/agents/safety-check',
    {
      config: { access: allow.account('account.read') },
      schema: {
        operationId: 'checkAgentSafety',
        tags: ['agents'],
        summary:
          'Check an agent definition, or a saved agent, against the safety rules (and a model review when an LLM is configured)',
        description:
          'Nothing is saved. The rules always run and give the same findings for the same definition; any error finding fails the check.',
        body: SafetyCheckBody,
        response: responses(SafetyReport),
      },
    },
    async (req) => safety.check(req.auth, req.body),
  );
}
