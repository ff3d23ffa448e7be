/**
 * The movement journal in its file (`movements.jsonl` in the data folder): what a restart reads
 * back, what a crash mid-append leaves, and what compaction keeps.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ANSWER_RETENTION_MS, type JournalEntry } from '../../service/wallet/journal-entries.ts';
import { FileJournalStore, type JournalFiles } from '../../service/wallet/journal-file-store.ts';
import { MovementJournal } from '../../service/wallet/movement-journal.ts';

const folders: string[] = [];
after(() => Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true }))));

async function dataFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'cww-journal-'));
  folders.push(folder);
  return folder;
}

const at = '2024-01-01T00:00:00.000Z';
const start = Date.parse(at);
const intent = { slot: 1 as const, value: 40, generation: 2, previousBalance: 30 };

/** Every kind of line a movement can have, for one movement. */
function linesOf(id: string, cardId = '04A1B2C3'): JournalEntry[] {
  return [
    {
      type: 'started',
      id,
      kind: 'recharge',
      cardId,
      keyFingerprint: 'k1',
      idempotency: { scope: 'k1:abc', requestHash: 'h' },
      at,
    },
    { type: 'reserved', id, credits: 10, amount: '5.00', intent, at },
    { type: 'card', id, outcome: 'committed', at },
    { type: 'answered', id, status: 200, body: { cardId, credits: 40 }, at },
  ];
}

describe('MovementJournal in its file', () => {
  test('when a journal is written and reopened, then every movement is read back as it was, in a private folder and file', async () => {
    const folder = join(await dataFolder(), 'data');
    const journal = new MovementJournal(folder);
    await journal.open(start);
    for (const entry of linesOf('m1')) await journal.append(entry);
    await journal.append({
      type: 'started',
      id: 'c1',
      kind: 'discharge',
      cardId: '04A1B2C3',
      keyFingerprint: 'k1',
      compensates: 'm1',
      credits: 10,
      at,
    });
    await journal.append({ type: 'conflict', id: 'c1', detail: 'NoCredits', at });
    await journal.append({ type: 'card', id: 'c1', outcome: 'not-written', torn: true, at });
    await journal.append({ type: 'resolved', id: 'c1', state: 'absent', at });
    await journal.append({
      type: 'started',
      id: 'a1',
      kind: 'discharge',
      cardId: '04FFFFFF',
      keyFingerprint: 'k2',
      adopted: true,
      at,
    });
    await journal.append({ type: 'personalizing', cardId: '04FFFFFF', step: 'trailer', at });
    const written = new Map(journal.movements);
    await journal.close();

    assert.equal((await stat(folder)).mode & 0o777, 0o700);
    assert.equal((await stat(join(folder, 'movements.jsonl'))).mode & 0o777, 0o600);
    const reopened = new MovementJournal(folder);
    await reopened.open(start + 1_000);
    assert.deepEqual(new Map(reopened.movements), written);
    assert.deepEqual(reopened.movements.get('m1'), {
      id: 'm1',
      kind: 'recharge',
      cardId: '04A1B2C3',
      keyFingerprint: 'k1',
      idempotency: { scope: 'k1:abc', requestHash: 'h' },
      startedAt: at,
      reserved: { credits: 10, amount: '5.00', intent },
      card: 'committed',
      cardAt: at,
      answer: { status: 200, body: { cardId: '04A1B2C3', credits: 40 }, at },
    });
    assert.deepEqual(reopened.movements.get('c1'), {
      id: 'c1',
      kind: 'discharge',
      cardId: '04A1B2C3',
      keyFingerprint: 'k1',
      idempotency: undefined,
      compensates: 'm1',
      credits: 10,
      startedAt: at,
      card: 'not-written',
      cardAt: at,
      torn: true,
      resolved: 'absent',
      conflict: 'NoCredits',
    });
    assert.equal(reopened.movements.get('a1')?.adopted, true);
    assert.deepEqual([...reopened.personalizing], [['04FFFFFF', { step: 'trailer', at }]]);
    await reopened.close();
  });

  test('when the last line was torn by a crash, then it is ignored; a broken line before the last is an error', async () => {
    const folder = await dataFolder();
    const file = join(folder, 'movements.jsonl');
    const [started, reserved] = linesOf('m1').map((entry) => JSON.stringify(entry));
    for (const text of [`${started}\n${reserved?.slice(0, 20)}`, `${started}\n{"type":\n`]) {
      await writeFile(file, text);
      const journal = new MovementJournal(folder);
      await journal.open(start);
      assert.deepEqual([...journal.movements.keys()], ['m1']);
      assert.equal(journal.movements.get('m1')?.reserved, undefined);
      // Compaction rewrote the file without the torn line.
      assert.equal(await readFile(file, 'utf8'), `${started}\n`);
      await journal.close();
    }
    await writeFile(file, `${started}\n{"type":\n${reserved}\n`);
    await assert.rejects(new MovementJournal(folder).open(start), {
      message: 'movement journal: line 2 is not JSON',
    });
  });

  test('when lines name a movement the journal does not hold, then they are ignored', async () => {
    const folder = await dataFolder();
    const journal = new MovementJournal(folder);
    await journal.open(start);
    await journal.append({ type: 'resolved', id: 'ghost', state: 'posted', at });
    await journal.append({ type: 'personalized', cardId: 'never-begun', at });
    assert.equal(journal.movements.size, 0);
    assert.equal(journal.personalizing.size, 0);
    await journal.close();
  });

  test('when the journal is closed (or not yet open), then an append fails and writes nothing; one failed append does not stop the next', async () => {
    const folder = await dataFolder();
    const journal = new MovementJournal(folder);
    const [started] = linesOf('m1');
    await assert.rejects(journal.append(started as JournalEntry), {
      message: 'movement journal is closed',
    });
    await journal.open(start);
    await journal.append(started as JournalEntry);
    assert.equal(journal.movements.size, 1);
    await journal.close();
    await assert.rejects(journal.append(started as JournalEntry), {
      message: 'movement journal is closed',
    });
    await journal.open(start);
    await journal.append({ type: 'resolved', id: 'm1', state: 'posted', at });
    assert.equal(journal.movements.get('m1')?.resolved, 'posted');
    await journal.close();
  });

  test('when the journal is reopened, then a resolved movement answered more than 24 h ago is dropped; one unresolved, or answered within 24 h, is kept', async () => {
    const folder = await dataFolder();
    const journal = new MovementJournal(folder);
    await journal.open(start);
    for (const id of ['old', 'open', 'recent']) {
      for (const entry of linesOf(id, `04${id.length}00000`)) await journal.append(entry);
    }
    await journal.append({ type: 'resolved', id: 'old', state: 'posted', at });
    await journal.append({ type: 'resolved', id: 'recent', state: 'posted', at });
    // Answered again later (a replay's answer stands for when it was given).
    const later = new Date(start + ANSWER_RETENTION_MS).toISOString();
    await journal.append({ type: 'answered', id: 'recent', status: 200, body: {}, at: later });
    await journal.close();
    const reopened = new MovementJournal(folder);
    await reopened.open(start + ANSWER_RETENTION_MS + 1);
    assert.deepEqual([...reopened.movements.keys()].sort(), ['open', 'recent']);
    await reopened.close();
    // Exactly 24 h after its answer, a movement is still kept.
    const again = new MovementJournal(folder);
    await again.open(Date.parse(later) + ANSWER_RETENTION_MS);
    assert.deepEqual([...again.movements.keys()].sort(), ['open', 'recent']);
    await again.close();
  });
});

describe('FileJournalStore durability', () => {
  /** File calls recorded in order, over an in-memory folder; `readError` fails the read. */
  function recordingFiles(readError?: NodeJS.ErrnoException) {
    const calls: string[] = [];
    const files: JournalFiles = {
      mkdir: async () => undefined,
      readFile: async (path) => {
        if (readError) throw readError;
        throw Object.assign(new Error(`${path}: missing`), { code: 'ENOENT' });
      },
      open: async (path, flags) => {
        const name = path.endsWith('.tmp') ? 'tmp' : path.endsWith('.jsonl') ? 'journal' : 'dir';
        calls.push(`open ${name} ${flags}`);
        return {
          write: async () => void calls.push(`write ${name}`),
          sync: async () => void calls.push(`sync ${name}`),
          datasync: async () => void calls.push(`datasync ${name}`),
          close: async () => void calls.push(`close ${name}`),
        };
      },
      rename: async () => void calls.push('rename tmp journal'),
    };
    return { files, calls };
  }

  test('when the journal is compacted and a line appended, then each is made durable before it counts', async () => {
    const { files, calls } = recordingFiles();
    const journal = new MovementJournal(new FileJournalStore('/data', files));
    await journal.open(start);
    // The new file synced and closed before it replaces the old; the folder synced so the
    // rename itself survives a power cut; then appends go to the journal, each fdatasynced.
    assert.deepEqual(calls, [
      'open tmp w',
      'write tmp',
      'sync tmp',
      'close tmp',
      'rename tmp journal',
      'open dir r',
      'sync dir',
      'close dir',
      'open journal a',
    ]);
    calls.length = 0;
    await journal.append(linesOf('m1')[0] as JournalEntry);
    assert.deepEqual(calls, ['write journal', 'datasync journal']);
    calls.length = 0;
    await journal.close();
    assert.deepEqual(calls, ['close journal']);
    await assert.rejects(
      new FileJournalStore('/data', files).append('{}\n'),
      /movement journal is closed/,
    );
  });

  test('when the data folder holds no journal yet, then the store reads it as empty, the folder made', async () => {
    const folder = join(await dataFolder(), 'new', 'data');
    assert.equal(await new FileJournalStore(folder).read(), '');
    assert.ok((await stat(folder)).isDirectory());
  });

  test('when the journal file cannot be read for another reason than missing, then opening fails', async () => {
    const denied = Object.assign(new Error('permission denied'), { code: 'EACCES' });
    const { files, calls } = recordingFiles(denied);
    const journal = new MovementJournal(new FileJournalStore('/data', files));
    // Taken as empty, it would forget every movement on its way: the worker must not start.
    await assert.rejects(journal.open(start), /permission denied/);
    assert.deepEqual(calls, [], 'nothing is rewritten');
  });
});
