// Placeholder: the contacts module declares its tables here.
export interface ContactsTables {}
