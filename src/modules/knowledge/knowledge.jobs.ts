import { moduleJobs } from '../../jobs/define.js';
import type { KnowledgeService } from './knowledge.service.js';

export const knowledgeJobs = moduleJobs('knowledge', {
  subscriptions: {
    // Every change of an agent's knowledge (or of its voice, which sets the search language) re-indexes it.
    'knowledge.reindex-agent': {
      events: ['agent.created', 'agent.updated', 'agent.deleted'],
      policy: { expireInSeconds: 600 },
      async handle(event, knowledge: KnowledgeService) {
        return knowledge.onAgentEvent(event);
      },
    },
  },
});
