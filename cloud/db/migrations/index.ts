import { migration001 } from './001-initial.ts';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Every migration, in order. Append only. */
export const migrations: readonly Migration[] = [migration001];
