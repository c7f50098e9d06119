/** What campaigns need from other modules: narrow slices of their services (wired in services.ts). */
import type { AgentsService } from '../agents/agents.service.js';
import type { CallsService } from '../calls/calls.service.js';
import type { ContactsService } from '../contacts/contacts.service.js';
import type { DncService } from '../dnc/dnc.service.js';
import type { NumbersService } from '../numbers/numbers.service.js';

export type AgentsForCampaigns = Pick<AgentsService, 'forCall'>;
export type ContactsForCampaigns = Pick<ContactsService, 'forDialer' | 'membersOfListsQuery'>;
export type DncForCampaigns = Pick<DncService, 'listedAmong'>;
export type NumbersForCampaigns = Pick<NumbersService, 'forCampaign' | 'callerNumber'>;
export type CallsForCampaigns = Pick<
  CallsService,
  'placeCampaignCall' | 'contactsInCall' | 'campaignCallOutcome' | 'recordCampaignEvent' | 'accountCallLoad'
>;
