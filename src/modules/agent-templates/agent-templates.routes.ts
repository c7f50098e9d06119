import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import { Agent } from '../agents/agents.schemas.js';
import type { AgentTemplatesService } from './agent-templates.service.js';
import {
  FromTemplateBody,
  GenerateBody,
  GeneratedAgent,
  TemplateDetail,
  TemplateList,
  TemplateParams,
  WizardAgentBody,
  WizardDetail,
  WizardList,
  WizardParams,
} from './agent-templates.schemas.js';

const read = allow.account('account.read');
const write = allow.account('agents.write');
const tags = ['agents'];

export function agentTemplatesRoutes(app: App, { agentTemplates }: { agentTemplates: AgentTemplatesService }) {
  templateRoutes(app, agentTemplates);
  wizardRoutes(app, agentTemplates);
}

/** The templates, and agents made from one. */
function templateRoutes(app: App, agentTemplates: AgentTemplatesService) {
  app.get(
    '/agent-templates',
    {
      config: { access: read },
      schema: {
        operationId: 'listAgentTemplates',
        tags,
        summary: 'The built-in agent templates',
        response: responses(TemplateList),
      },
    },
    async () => agentTemplates.listTemplates(),
  );
  app.get(
    '/agent-templates/:id',
    {
      config: { access: read },
      schema: {
        operationId: 'getAgentTemplate',
        tags,
        summary: 'One template: its prompt parts with {{blanks}}, and the variables that fill them',
        params: TemplateParams,
        response: responses(TemplateDetail),
      },
    },
    async (req) => agentTemplates.getTemplate(req.params.id),
  );
  app.post(
    '/agents/from-template',
    {
      config: { access: write },
      schema: {
        operationId: 'createAgentsFromTemplate',
        tags,
        summary: 'Create an agent from a template: blanks filled from variables, then overrides applied',
        body: FromTemplateBody,
        response: responses(Agent),
      },
    },
    async (req) =>
      agentTemplates.createFromTemplate(req.auth, req.body.templateId, req.body.overrides, req.body.variables),
  );
}

/** The wizard: its question sets, agents made from the answers, and whole agents generated from a description. */
function wizardRoutes(app: App, agentTemplates: AgentTemplatesService) {
  app.get(
    '/wizard/templates',
    {
      config: { access: read },
      schema: {
        operationId: 'listWizardTemplates',
        tags,
        summary: 'The agent wizard: one question set per use case',
        response: responses(WizardList),
      },
    },
    async () => agentTemplates.listWizards(),
  );
  app.get(
    '/wizard/templates/:key',
    {
      config: { access: read },
      schema: {
        operationId: 'getWizardTemplate',
        tags,
        summary: 'The questions of one use case, with types, options and defaults',
        params: WizardParams,
        response: responses(WizardDetail),
      },
    },
    async (req) => agentTemplates.getWizard(req.params.key),
  );
  app.post(
    '/wizard/agents',
    {
      config: { access: write },
      schema: {
        operationId: 'createAgentWithWizard',
        tags,
        summary: "Create an agent from a wizard's answers",
        description:
          'Unknown question keys, missing required answers and invalid answers are one 400 naming each field (details.fields).',
        body: WizardAgentBody,
        response: responses(Agent),
      },
    },
    async (req) => agentTemplates.createFromWizard(req.auth, req.body),
  );
  app.post(
    '/agents/wizard/generate',
    {
      config: { access: write },
      schema: {
        operationId: 'generateAgentDefinition',
        tags,
        summary:
          'Draft a whole agent (every prompt part and the first message) from a business description and a goal; nothing is saved',
        description:
          'With an LLM configured, the model writes it as JSON constrained by a schema; without one, or when the model fails, a deterministic generator adapts the closest template (generator says which).',
        body: GenerateBody,
        response: responses(GeneratedAgent),
      },
    },
    async (req) => agentTemplates.generate(req.body),
  );
}
