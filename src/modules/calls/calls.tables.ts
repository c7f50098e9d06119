// Placeholder: the calls module declares its tables here.
export interface CallsTables {}
