import type { Auth } from '../../lib/caller.js';
import { AppError, notFound } from '../../lib/errors.js';
import type { LlmClient } from '../../providers/llm/index.js';
import { ProviderError } from '../../providers/provider-error.js';
import type { AgentsService } from '../agents/agents.service.js';
import type { DispositionsService } from '../dispositions/dispositions.service.js';
import type { CreateAgentInput } from '../agents/agents.schemas.js';
import type { SafetyService } from '../safety/safety.service.js';
import { AGENT_TEMPLATES, findTemplate, renderTemplate, type RenderedTemplate } from './agent-templates.catalog.js';
import { generateOffline, generateWithLlm, type GenerateInput } from './agent-templates.generate.js';
import type { AgentTemplate } from './agent-templates.types.js';
import { readAnswers, wizardQuestions } from './agent-templates.wizard.js';
import type { TemplateOverrides, WizardAgentInput } from './agent-templates.schemas.js';

export { AGENT_TEMPLATES, TEMPLATE_IDS } from './agent-templates.catalog.js';

function requireTemplate(id: string, what = 'Agent template'): AgentTemplate {
  const template = findTemplate(id);
  if (!template) throw notFound(what);
  return template;
}

/** The body of POST /v1/agents for a rendered template, with the caller's fields on top (nested settings merged). */
function agentInput(rendered: RenderedTemplate, overrides: TemplateOverrides = {}): CreateAgentInput {
  const { name, transfer, voicemail, ...parts } = rendered;
  return {
    ...parts,
    ...overrides,
    name: overrides.name ?? name,
    transfer: { ...transfer, ...overrides.transfer },
    voicemail: { ...voicemail, ...overrides.voicemail },
  };
}

/** An account-level actor for callers that are not a request (the demo seeding an account). */
const accountActor = (accountId: string): Auth => ({
  accountId,
  role: 'owner',
  isPlatformAdmin: false,
  scheme: 'api_key',
  rateLimitPerMinute: null,
});

/** Agent templates, the wizard built on them, and the agent generator. Templates are code: no table. */
export function createAgentTemplatesService(deps: {
  agents: Pick<AgentsService, 'create'>;
  dispositions: Pick<DispositionsService, 'addMissing'>;
  safety: Pick<SafetyService, 'checkRules'>;
  llm: LlmClient;
  llmConfigured: boolean;
}) {
  const { agents, dispositions, safety, llm, llmConfigured } = deps;

  /** The agent, then the template's disposition codes the account lacks (after: a refused agent writes nothing). */
  async function createAgent(auth: Auth, template: AgentTemplate, input: CreateAgentInput) {
    const agent = await agents.create(auth, input);
    await dispositions.addMissing(auth.accountId, template.dispositions);
    return agent;
  }

  return {
    listTemplates() {
      return {
        templates: AGENT_TEMPLATES.map((t) => ({
          id: t.id,
          name: t.name,
          description: t.description,
          direction: t.direction,
          tone: t.tone,
          variables: t.variables.map((v) => v.key),
        })),
      };
    },

    getTemplate(id: string) {
      const t = requireTemplate(id);
      return {
        id: t.id,
        name: t.name,
        description: t.description,
        direction: t.direction,
        tone: t.tone,
        variables: t.variables.map((v) => ({ ...v, options: v.options ? [...v.options] : null })),
        parts: t.parts,
        transfer: t.transfer,
        voicemail: t.voicemail,
        dispositions: t.dispositions.map((d) => ({ ...d })),
        contactColumns: [...t.contactColumns],
      };
    },

    /**
     * Creates an agent from a template: its blanks filled from `variables` (defaults otherwise), then `overrides`
     * laid over it. `who` is the request's auth, or an account id for callers outside a request.
     */
    async createFromTemplate(
      who: Auth | string,
      templateId: string,
      overrides: TemplateOverrides = {},
      variables: Record<string, string> = {},
    ) {
      const template = requireTemplate(templateId);
      const unknown = Object.keys(variables).filter((key) => !template.variables.some((v) => v.key === key));
      if (unknown.length > 0) {
        const fields = unknown.map((key) => ({
          field: `body/variables/${key}`,
          message: `is not a variable of the ${template.id} template`,
        }));
        throw new AppError(
          'validation_failed',
          `Invalid request: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`,
          { fields },
        );
      }
      const auth = typeof who === 'string' ? accountActor(who) : who;
      return createAgent(auth, template, agentInput(renderTemplate(template, variables), overrides));
    },

    listWizards() {
      return {
        templates: AGENT_TEMPLATES.map((t) => ({
          key: t.id,
          name: t.name,
          description: t.description,
          questionCount: wizardQuestions(t).length,
        })),
      };
    },

    getWizard(key: string) {
      const t = requireTemplate(key, 'Wizard template');
      return { key: t.id, name: t.name, description: t.description, questions: wizardQuestions(t) };
    },

    async createFromWizard(auth: Auth, input: WizardAgentInput) {
      const template = requireTemplate(input.templateKey, 'Wizard template');
      const answers = readAnswers(template, input.answers);
      const rendered = renderTemplate(template, answers.values, answers.tone);
      return createAgent(
        auth,
        template,
        agentInput(rendered, {
          ...(input.name ? { name: input.name } : {}),
          voice: answers.voice,
          transfer: { number: answers.transferNumber },
          voicemail: answers.leaveVoicemail
            ? {
                action: 'leave_message',
                message:
                  rendered.voicemail.message ||
                  `Hello, this is an AI assistant calling from ${answers.values.businessName}. Please call us back. Thank you.`,
              }
            : { action: 'hang_up' },
        }),
      );
    },

    /** A whole agent definition from a description and a goal, checked by the safety rules; nothing is saved. */
    async generate(input: GenerateInput) {
      let fallbackReason: string | null = null;
      if (llmConfigured) {
        try {
          const definition = await generateWithLlm(llm, input);
          const { passed, findings } = safety.checkRules(definition);
          return {
            definition,
            generator: { kind: 'llm' as const, model: llm.name, templateId: null, fallbackReason: null },
            safety: { result: passed ? 'pass' : 'fail', findings },
          };
        } catch (error) {
          const reason =
            error instanceof ProviderError
              ? error.message
              : `its answer was not a usable JSON object (${(error as Error).message})`;
          fallbackReason = `The model could not write the agent, so the built-in generator did: ${reason}`.slice(
            0,
            500,
          );
        }
      }
      const { definition, templateId } = generateOffline(input);
      const { passed, findings } = safety.checkRules(definition);
      return {
        definition,
        generator: { kind: 'builtin' as const, model: null, templateId, fallbackReason },
        safety: { result: passed ? 'pass' : 'fail', findings },
      };
    },
  };
}

export type AgentTemplatesService = ReturnType<typeof createAgentTemplatesService>;
