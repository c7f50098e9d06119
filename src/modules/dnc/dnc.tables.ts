// Placeholder: the dnc module declares its tables here.
export interface DncTables {}
