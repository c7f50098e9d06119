import type { ColumnType, Generated } from 'kysely';

export const DISPOSITION_CATEGORIES = ['positive', 'neutral', 'negative', 'compliance'] as const;
export type DispositionCategory = (typeof DISPOSITION_CATEGORIES)[number];

export interface DispositionCodesTable {
  id: string;
  account_id: string;
  code: string;
  label: string;
  description: Generated<string>;
  category: DispositionCategory;
  is_system: Generated<boolean>;
  active: Generated<boolean>;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface DispositionsTables {
  disposition_codes: DispositionCodesTable;
}
