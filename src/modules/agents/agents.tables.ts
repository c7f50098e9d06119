// Placeholder: the agents module declares its tables here.
export interface AgentsTables {}
