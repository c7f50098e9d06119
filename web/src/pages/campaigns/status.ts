/** Campaign statuses and how they read. */
import type { Operations } from '../../api/client';
import { STATUS_COLORS } from '../../ui/format';

export type CampaignStatus = NonNullable<NonNullable<Operations['listCampaigns']['parameters']['query']>['status']>;
export const CAMPAIGN_STATUSES = [
  'draft',
  'running',
  'paused',
  'completed',
  'cancelled',
] as const satisfies readonly CampaignStatus[];
export const CAMPAIGN_COLORS: Record<string, string> = { ...STATUS_COLORS, running: 'green.9', cancelled: 'gray.7' };
