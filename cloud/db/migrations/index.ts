import { migration001 } from './001-initial.ts';
import { migration002 } from './002-void-tombstones.ts';
import { migration003 } from './003-card-accounts.ts';
import { migration004 } from './004-card-above-account.ts';
import { migration005 } from './005-tills.ts';
import { migration006 } from './006-one-round-trip.ts';
import { migration007 } from './007-awaits-card.ts';
import { migration008 } from './008-tills-and-occurred-at.ts';
import { migration009 } from './009-till-floats.ts';
import { migration010 } from './010-back-office.ts';
import { migration011 } from './011-card-records.ts';
import { migration012 } from './012-references.ts';
import { migration013 } from './013-lost-cards-refunds-bonuses.ts';
import { migration015 } from './015-card-rule-compensations.ts';
import { migration016 } from './016-compensations-by-day.ts';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Every migration, in order. Append only. */
export const migrations: readonly Migration[] = [
  migration001,
  migration002,
  migration003,
  migration004,
  migration005,
  migration006,
  migration007,
  migration008,
  migration009,
  migration010,
  migration011,
  migration012,
  migration013,
  migration015,
  migration016,
];
