import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { DeletedBody, IdParams, PageOnlyQuery, responses } from '../../http/schemas.js';
import type { AgentsService } from './agents.service.js';
import {
  Agent,
  AgentList,
  AgentVersion,
  AgentVersionList,
  CreateAgentBody,
  type KnowledgeIndexState,
  ListAgentsQuery,
  UpdateAgentBody,
  VersionParams,
} from './agents.schemas.js';

/**
 * The search index of an agent's knowledge base, as the knowledge module (which reads and saves agents) reports it:
 * the agent detail shows it, so the route asks both.
 */
export interface KnowledgeIndexReader {
  indexState(
    accountId: string,
    agentId: string,
    knowledge: string,
    voiceId: string | null,
  ): Promise<KnowledgeIndexState>;
}

const read = allow.account('account.read');
const write = allow.account('agents.write');
const tags = ['agents'];

export function agentsRoutes(
  app: App,
  { agents, knowledge }: { agents: AgentsService; knowledge: KnowledgeIndexReader },
) {
  agentRoutes(app, agents, knowledge);
  agentVersionRoutes(app, agents);
}

function agentRoutes(app: App, agents: AgentsService, knowledge: KnowledgeIndexReader) {
  app.get(
    '/agents',
    {
      config: { access: read },
      schema: {
        operationId: 'listAgents',
        tags,
        summary: "List the account's agents, newest first",
        querystring: ListAgentsQuery,
        response: responses(AgentList),
      },
    },
    async (req) => agents.list(req.auth, req.query),
  );
  app.post(
    '/agents',
    {
      config: { access: write },
      schema: {
        operationId: 'createAgent',
        tags,
        summary: 'Create an agent (a draft at version 1 unless a status is given)',
        body: CreateAgentBody,
        response: responses(Agent),
      },
    },
    async (req) => agents.create(req.auth, req.body),
  );
  app.get(
    '/agents/:id',
    {
      config: { access: read },
      schema: {
        operationId: 'getAgent',
        tags,
        summary: 'Read an agent: settings, prompt parts and the assembled system prompt',
        params: IdParams,
        response: responses(Agent),
      },
    },
    async (req) => {
      const agent = await agents.get(req.auth, req.params.id);
      const knowledgeIndex = await knowledge.indexState(
        req.auth.accountId,
        agent.id,
        agent.knowledgeBase,
        agent.voiceId,
      );
      return { ...agent, knowledgeIndex };
    },
  );
  app.patch(
    '/agents/:id',
    {
      config: { access: write },
      schema: {
        operationId: 'updateAgent',
        tags,
        summary: 'Update an agent; a changed prompt part or first message saves a new version',
        params: IdParams,
        body: UpdateAgentBody,
        response: responses(Agent),
      },
    },
    async (req) => agents.update(req.auth, req.params.id, req.body),
  );
  app.delete(
    '/agents/:id',
    {
      config: { access: write },
      schema: {
        operationId: 'deleteAgent',
        tags,
        summary: 'Delete an agent; its inbound number is released, past calls keep its name',
        params: IdParams,
        response: responses(DeletedBody),
      },
    },
    async (req) => agents.delete(req.auth, req.params.id),
  );
}

/** The saved versions of an agent's prompt. */
function agentVersionRoutes(app: App, agents: AgentsService) {
  app.get(
    '/agents/:id/versions',
    {
      config: { access: read },
      schema: {
        operationId: 'listAgentVersions',
        tags,
        summary: "An agent's saved prompt versions, newest first",
        description:
          'Each version says when and by whom it was saved and which parts it changed, without their text: read one ' +
          'version for its full prompt.',
        params: IdParams,
        querystring: PageOnlyQuery,
        response: responses(AgentVersionList),
      },
    },
    async (req) => agents.listVersions(req.auth, req.params.id, req.query),
  );
  app.get(
    '/agents/:id/versions/:version',
    {
      config: { access: read },
      schema: {
        operationId: 'getAgentVersion',
        tags,
        summary: 'One saved prompt version',
        description: 'The version with the full prompt as it stood then: every part, changed in this version or not.',
        params: VersionParams,
        response: responses(AgentVersion),
      },
    },
    async (req) => agents.getVersion(req.auth, req.params.id, req.params.version),
  );
}
