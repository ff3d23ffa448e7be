import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { saveSettings, type SaveSteps } from '../../../main/save-settings.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../../main/settings.ts';
import type { LiveSettings } from '../../../service/worker-service.ts';

const current: Settings = { ...DEFAULT_SETTINGS, apiKey: 'shop-key-0123456789abcdef' };
const liveOf = ({ apiKey, allowedOrigins, port }: Settings): LiveSettings => ({
  apiKey,
  allowedOrigins,
  port,
});

/** A running service and a store that records what was asked of them. */
function fakeSteps(failures: { persist?: Error; rollback?: Error } = {}) {
  const applied: LiveSettings[] = [];
  const persisted: Settings[] = [];
  const restarted: Settings[] = [];
  const steps: SaveSteps = {
    service: {
      applySettings: async (live) => {
        if (applied.length > 0 && failures.rollback) throw failures.rollback;
        applied.push(live);
      },
    },
    persist: (settings) => {
      if (failures.persist) throw failures.persist;
      persisted.push(settings);
    },
    restart: async (settings) => void restarted.push(settings),
  };
  return { steps, applied, persisted, restarted };
}

const diskFull = new Error('ENOSPC: no space left on device, write');

describe('saving the settings from the window', () => {
  test('when a live change is stored, then it is applied, stored and nothing restarts', async () => {
    const next = { ...current, allowedOrigins: ['https://pos.example.com'] };
    const fake = fakeSteps();
    const result = await saveSettings(current, next, fake.steps);
    assert.deepEqual(result, { ok: true, restarted: false });
    assert.deepEqual(fake.applied, [liveOf(next)]);
    assert.deepEqual(fake.persisted, [next]);
    assert.deepEqual(fake.restarted, []);
  });

  test('when storing a live change fails, then it says why and the previous settings are applied back', async () => {
    const next = { ...current, allowedOrigins: ['https://pos.example.com'], port: 4179 };
    const fake = fakeSteps({ persist: diskFull });
    const result = await saveSettings(current, next, fake.steps);
    assert.deepEqual(result, {
      ok: false,
      problems: [
        {
          field: null,
          message:
            'The settings could not be saved: ENOSPC: no space left on device, write. Nothing was changed.',
        },
      ],
    });
    assert.deepEqual(fake.applied, [liveOf(next), liveOf(current)], 'applied, then rolled back');
    assert.deepEqual(fake.restarted, []);
  });

  test('when storing a change that needs a restart fails, then it says why and the service is left alone', async () => {
    const next = { ...current, cardKey: 'A0A1A2A3A4A5' };
    const keyringDenied = new Error('the keyring refused to encrypt the API key.');
    const fake = fakeSteps({ persist: keyringDenied });
    const result = await saveSettings(current, next, fake.steps);
    assert.deepEqual(result, {
      ok: false,
      problems: [
        {
          field: null,
          message:
            'The settings could not be saved: the keyring refused to encrypt the API key. Nothing was changed.',
        },
      ],
    });
    assert.deepEqual(fake.applied, [], 'nothing applied live');
    assert.deepEqual(fake.restarted, [], 'no restart with unsaved settings');
  });

  test('when storing fails and putting the previous settings back fails too, then it says the service runs with the new ones', async () => {
    const next = { ...current, port: 4179 };
    const fake = fakeSteps({ persist: diskFull, rollback: new Error('port 4178 is taken') });
    const result = await saveSettings(current, next, fake.steps);
    assert.equal(result.ok, false, JSON.stringify(result));
    assert.deepEqual(!result.ok && result.problems.map((problem) => problem.message), [
      'The settings could not be saved: ENOSPC: no space left on device, write. The service runs with them until it restarts (putting the previous ones back failed: port 4178 is taken).',
    ]);
  });
});
