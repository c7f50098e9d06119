/** The demo's two agents, as bodies of POST /v1/agents/from-template: built-in templates, named for the demo. */
export function demoAgents(): Array<{ templateId: string; overrides: Record<string, unknown> }> {
  return [
    { templateId: 'appointment-setting', overrides: { name: 'Demo: appointment setter', status: 'active' } },
    { templateId: 'appointment-reminders', overrides: { name: 'Demo: appointment reminder', status: 'active' } },
  ];
}
