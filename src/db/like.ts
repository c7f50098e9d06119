/** An ILIKE pattern matching text anywhere, with LIKE's wildcards (`%`, `_`, `\`) in the text taken literally. */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, '\\$&')}%`;
