/** The prompt parts of an agent, shared by the editor and the version diff. */
import type { Schemas } from '../../api/client';

type Agent = Schemas['AgentDetail'];
type Finding = Schemas['SafetyFinding'];
type Update = Schemas['UpdateAgentRequest'];
type VersionParts = Schemas['AgentVersion']['parts'];

/** The prompt parts, each a tab, in the order the prompt is assembled; then the first message. */
export const PARTS = [
  ['soul', 'Soul', 'Who the agent is: personality, tone, how it speaks.'],
  ['mission', 'Mission', 'What the call is for.'],
  ['playbook', 'Playbook', 'The steps of the conversation.'],
  ['examples', 'Examples', 'Sample exchanges.'],
  ['objections', 'Objections', 'Objections and how to answer them.'],
  ['closers', 'Closers', 'How to close.'],
  ['notes', 'Notes', 'Anything else the agent should know.'],
  ['faq', 'FAQ', 'Questions and answers.'],
  ['knowledgeBase', 'Knowledge', 'Reference text the agent looks things up in.'],
  ['firstMessage', 'First message', 'What the agent says first.'],
] as const satisfies ReadonlyArray<
  readonly [keyof Agent & keyof Update & keyof VersionParts & Finding['part'] & string, string, string]
>;
export type Part = (typeof PARTS)[number][0];
