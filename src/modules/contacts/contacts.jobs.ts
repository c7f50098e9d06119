import { Type } from 'typebox';
import { defineJob, moduleJobs } from '../../jobs/define.js';
import type { ContactsService } from './contacts.service.js';

export const contactsJobs = moduleJobs('contacts', {
  jobs: {
    /** Fails the imports left processing by a process that stopped; at every worker start and each minute. */
    'contacts.sweep-imports': defineJob({
      payload: Type.Object({}),
      schedule: '* * * * *',
      atStart: true,
      handle: (_payload, contacts: ContactsService) => contacts.sweepLostImports(),
    }),
  },
});
