import { ledgerErrors } from '../errors.ts';
import type { TillFloatReport, TillHeartbeat, TillReader } from '../../common/ledger-contract.ts';
import { parseTimestamp } from './movement-request.ts';

/** Parses `POST /v1/tills/{tillId}/heartbeat`'s body; a problem is 400 InvalidHeartbeat. */
const READER_STATES: readonly TillReader['state'][] = [
  'ready',
  'no-reader',
  'unavailable',
  'stopped',
];
const MAX_COUNT = 1_000_000;
const MAX_CREDITS = 2_147_483_647;

type Fields = Record<string, unknown>;

function object(value: unknown, name: string, allowed: readonly string[]): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw ledgerErrors.invalidHeartbeat(`${name}: must be an object`);
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key))
      throw ledgerErrors.invalidHeartbeat(`${name}.${key}: unknown field`);
  }
  return value as Fields;
}

function count(value: unknown, name: string, max = MAX_COUNT): number {
  if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > max) {
    throw ledgerErrors.invalidHeartbeat(`${name}: must be an integer from 0 to ${max}`);
  }
  return value as number;
}

function textOrNull(value: unknown, name: string, pattern: RegExp, what: string): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || !pattern.test(value)) {
    throw ledgerErrors.invalidHeartbeat(`${name}: must be ${what}, or null`);
  }
  return value;
}

function parseFloat(value: unknown): TillFloatReport | null {
  if (value === null) return null;
  const float = object(value, 'float', [
    'credits',
    'unreportedMovements',
    'unreportedCredits',
    'offlineSince',
  ]);
  const offlineSince = float.offlineSince ?? null;
  if (offlineSince !== null && parseTimestamp(offlineSince) === undefined) {
    throw ledgerErrors.invalidHeartbeat(
      'float.offlineSince: must be an ISO 8601 timestamp, or null',
    );
  }
  return {
    credits: count(float.credits, 'float.credits', MAX_CREDITS),
    unreportedMovements: count(float.unreportedMovements, 'float.unreportedMovements'),
    unreportedCredits: count(float.unreportedCredits, 'float.unreportedCredits', MAX_CREDITS),
    offlineSince: offlineSince as string | null,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The till of the path: a UUID, lower case. */
export function parseTillId(tillId: string): string {
  if (!UUID.test(tillId)) throw ledgerErrors.invalidHeartbeat('tillId: must be a UUID');
  return tillId.toLowerCase();
}

export function parseHeartbeat(body: unknown): TillHeartbeat {
  const fields = object(body ?? null, '(body)', [
    'version',
    'reader',
    'pendingMovements',
    'waitingMovements',
    'float',
  ]);
  const version = fields.version;
  if (typeof version !== 'string' || !/^[\x21-\x7e]{1,40}$/.test(version)) {
    throw ledgerErrors.invalidHeartbeat('version: must be 1 to 40 visible ASCII characters');
  }
  const reader = object(fields.reader, 'reader', ['state', 'name', 'problem']);
  if (!READER_STATES.includes(reader.state as TillReader['state'])) {
    throw ledgerErrors.invalidHeartbeat(`reader.state: must be one of ${READER_STATES.join(', ')}`);
  }
  const heartbeat: TillHeartbeat = {
    version,
    reader: {
      state: reader.state as TillReader['state'],
      name: textOrNull(
        reader.name ?? null,
        'reader.name',
        /^[^\p{Cc}]{1,200}$/u,
        '1 to 200 characters',
      ),
      problem: textOrNull(
        reader.problem ?? null,
        'reader.problem',
        /^[a-z][a-z-]{0,39}$/,
        'a problem code like service-stopped',
      ),
    },
    pendingMovements: count(fields.pendingMovements, 'pendingMovements'),
    waitingMovements: count(fields.waitingMovements, 'waitingMovements'),
  };
  if (fields.float !== undefined) heartbeat.float = parseFloat(fields.float);
  return heartbeat;
}
