import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ReaderStatus } from '../../../service/card/reader-manager.ts';
import { emptySnapshot, statusModel, type StatusSnapshot } from '../../../main/status-model.ts';
import { trayMenu, trayState, trayTooltip } from '../../../main/tray-state.ts';
import { buildFakeMenu, FakeTray } from '../../support/electron-mock.ts';

const running = (snapshot = emptySnapshot()): StatusSnapshot =>
  statusModel.service(snapshot, { url: 'http://127.0.0.1:4178', state: 'running', error: null });
const reader = (overrides: Partial<ReaderStatus> = {}): ReaderStatus => ({
  pcsc: 'ready',
  readers: ['ACS ACR122U'],
  reader: 'ACS ACR122U',
  card: null,
  problem: null,
  ...overrides,
});

describe('tray state transitions', () => {
  test('when the service runs without a reader, then no-reader', () => {
    assert.equal(trayState(running()), 'no-reader');
    assert.equal(
      trayState(statusModel.reader(running(), reader({ pcsc: 'unavailable', reader: null }))),
      'no-reader',
    );
  });

  test('when a reader is attached, then ready; a card on it, then card-present; removed, then ready again', () => {
    let snapshot = statusModel.reader(running(), reader());
    assert.equal(trayState(snapshot), 'ready');
    snapshot = statusModel.reader(
      snapshot,
      reader({ card: { cardId: '04A1B2C3', reader: 'ACS ACR122U', since: new Date(0) } }),
    );
    assert.equal(trayState(snapshot), 'card-present');
    assert.equal(trayTooltip(snapshot), 'Card Wallet Worker: card 04A1B2C3');
    snapshot = statusModel.reader(snapshot, reader());
    assert.equal(trayState(snapshot), 'ready');
    assert.equal(snapshot.lastCard?.cardId, '04A1B2C3', 'the last card stays shown');
  });

  test('when the service failed, or movements wait for an unreachable ledger, then error with the reason', () => {
    const failed = statusModel.service(emptySnapshot(), {
      url: null,
      state: 'error',
      error: 'port 4178 is in use',
    });
    assert.equal(trayState(failed), 'error');
    assert.match(trayTooltip(failed), /port 4178 is in use/);
    const waiting = statusModel.ledger(
      statusModel.reader(running(), reader()),
      { reachable: false, at: new Date(0) },
      2,
      [],
    );
    assert.equal(trayState(waiting), 'error');
    assert.match(trayTooltip(waiting), /2 movement\(s\) waiting/);
    assert.equal(
      trayState(statusModel.ledger(waiting, { reachable: true, at: new Date(1) }, 0, [])),
      'ready',
    );
  });

  test('when a movement waits for its card, then the tooltip says so while the tray stays usable', () => {
    const waiting = statusModel.ledger(
      statusModel.reader(running(), reader()),
      { reachable: true, at: new Date(0) },
      0,
      [
        {
          id: 'm1',
          kind: 'recharge',
          cardId: '04A1B2C3',
          credits: 6,
          since: '2026-11-23T10:00:00Z',
          owner: 'this-till',
          overdue: false,
        },
      ],
    );
    assert.equal(trayState(waiting), 'ready');
    assert.match(trayTooltip(waiting), /Ready \(1 movement\(s\) wait for their card\)/);
  });

  test("when a card's movement records do not explain it (the till's finding, or the ledger's refusal), then the tooltip says why, within 127 characters, until another card is seen", () => {
    const id = '04A1B2C3D4E5F6';
    let snapshot = statusModel.reader(
      running(),
      reader({ card: { cardId: id, reader: 'ACS ACR122U', since: new Date(0) } }),
    );
    for (const [reason, words] of [
      ['card-above-record', 'flagged suspect: it holds more than its newest movement record says'],
      [
        'record-of-voided-movement',
        'flagged suspect: its newest movement record names a movement found not written',
      ],
      [
        'CardRecordMismatch',
        'flagged suspect by the ledger (discharge refused: its records do not explain it)',
      ],
    ] as const) {
      snapshot = statusModel.cardCredits(snapshot, id, 45, new Date(1), true, reason);
      const tooltip = trayTooltip(snapshot);
      assert.equal(tooltip, `Card Wallet Worker: card ${id} ${words}`);
      assert.ok(
        tooltip.length <= 127,
        `Windows cuts tooltips at 127 characters: ${tooltip.length}`,
      );
    }
    // Read again (no flag in that answer), or refused for its account: still said the same way.
    snapshot = statusModel.cardCredits(snapshot, id, 45, new Date(2));
    snapshot = statusModel.cardCredits(snapshot, id, 45, new Date(3), true, 'CardAccountExceeded');
    assert.match(trayTooltip(snapshot), /its records do not explain it\)$/);
    snapshot = statusModel.cardCredits(snapshot, '0A0B0C0D', 0, new Date(4));
    assert.equal(snapshot.lastCard?.suspect, false);
    assert.equal(snapshot.lastCard?.suspectText, undefined);
  });

  test('when the ledger refuses to pay a card out, then the tooltip and menu say it is flagged suspect until another card is seen', () => {
    const onReader = (cardId: string) =>
      reader({ card: { cardId, reader: 'ACS ACR122U', since: new Date(0) } });
    let snapshot = statusModel.reader(running(), onReader('04A1B2C3D4E5F6'));
    snapshot = statusModel.cardCredits(snapshot, '04A1B2C3D4E5F6', 500, new Date(1), true);
    const tooltip = trayTooltip(snapshot);
    assert.equal(
      tooltip,
      'Card Wallet Worker: card 04A1B2C3D4E5F6 flagged suspect by the ledger (discharge refused: holds more than the shop put on it)',
    );
    assert.ok(tooltip.length <= 127, `Windows cuts tooltips at 127 characters: ${tooltip.length}`);
    assert.equal(
      trayMenu(snapshot, false).find((item) => item.id === 'status-card')?.label,
      'Last card: 04A1B2C3D4E5F6 (500 credits), flagged suspect',
    );
    // Read again, taken off and put back: the same card, still suspect.
    snapshot = statusModel.cardCredits(snapshot, '04A1B2C3D4E5F6', 500, new Date(2));
    snapshot = statusModel.reader(
      statusModel.reader(snapshot, reader()),
      onReader('04A1B2C3D4E5F6'),
    );
    assert.equal(snapshot.lastCard?.suspect, true);
    snapshot = statusModel.reader(snapshot, onReader('0A0B0C0D'));
    assert.equal(snapshot.lastCard?.suspect, false);
    assert.equal(trayTooltip(snapshot), 'Card Wallet Worker: card 0A0B0C0D');
  });

  test('when the menu is built, then it has status lines, the actions, and start at login as a checkbox', () => {
    const snapshot = statusModel.cardCredits(
      statusModel.reader(running(), reader()),
      '04A1B2C3',
      120,
      new Date(0),
    );
    const menu = trayMenu(snapshot, true);
    assert.deepEqual(
      menu.filter((item) => !item.enabled).map((item) => item.label),
      [
        'Service: http://127.0.0.1:4178',
        'Reader: ACS ACR122U',
        'Last card: 04A1B2C3 (120 credits)',
      ],
    );
    assert.deepEqual(
      menu.filter((item) => item.enabled && item.type !== 'separator').map((item) => item.id),
      ['open-window', 'copy-url', 'copy-api-key', 'open-log-folder', 'start-at-login', 'quit'],
    );
    assert.equal(menu.find((item) => item.id === 'start-at-login')?.checked, true);
    assert.equal(
      trayMenu(emptySnapshot(), false).find((item) => item.id === 'copy-url')?.enabled,
      false,
    );
  });
});

describe('the reader named truthfully in the tray', () => {
  const problem = (code: NonNullable<ReaderStatus['problem']>['code'], message = code) =>
    reader({
      pcsc: 'unavailable',
      reader: null,
      readers: [],
      problem: { code, message, at: new Date(0) },
    });

  test('when Windows runs the smart-card service only with a reader, then the tooltip says so and the menu offers the fix', () => {
    const snapshot = statusModel.reader(running(), problem('service-on-demand'), 'win32');
    assert.equal(trayState(snapshot), 'no-reader');
    assert.equal(
      trayTooltip(snapshot),
      'Card Wallet Worker: Smart-card service starts only with a reader',
    );
    const menu = trayMenu(snapshot, false);
    assert.equal(
      menu.find((item) => item.id === 'status-reader')?.label,
      'Reader: smart-card service starts only with a reader',
    );
    assert.equal(
      menu.find((item) => item.id === 'reader-fix-service')?.label,
      'Set the smart-card service to start automatically…',
    );
  });

  test('when each problem happens, then the tooltip names it, never "service not running" for all of them', () => {
    const said = (status: ReaderStatus, platform: NodeJS.Platform = 'win32') =>
      trayTooltip(statusModel.reader(running(), status, platform));
    assert.equal(said(reader({ readers: [], reader: null })), 'Card Wallet Worker: No card reader');
    assert.match(said(problem('service-stopped')), /Smart-card service stopped$/);
    assert.match(said(problem('service-stopped'), 'linux'), /pcscd is not running$/);
    assert.match(said(problem('service-disabled')), /Smart-card service disabled$/);
    assert.match(said(problem('library-missing'), 'linux'), /PC\/SC library missing$/);
    assert.match(said(problem('wrong-abi')), /Reader module does not fit this app$/);
    assert.match(said(problem('host-not-answering')), /Reader connection restarted$/);
    const inUse = statusModel.reader(
      running(),
      reader({ problem: { code: 'reader-in-use', message: 'x', at: new Date(0) } }),
      'win32',
    );
    assert.equal(trayState(inUse), 'no-reader');
    assert.equal(trayTooltip(inUse), 'Card Wallet Worker: Reader in use by another program');
    for (const tooltip of [said(problem('service-on-demand')), said(problem('wrong-abi'))])
      assert.ok(tooltip.length <= 127, tooltip);
  });

  test('when an update is downloaded, then the menu says so and offers to restart to install it; while off, no update line', () => {
    const ready = statusModel.update(running(), {
      state: 'ready',
      version: '0.2.0',
      installs: null,
    });
    const menu = trayMenu(ready, false);
    assert.equal(menu.find((item) => item.id === 'status-update')?.label, 'Updates: 0.2.0 ready');
    assert.equal(
      menu.find((item) => item.id === 'install-update')?.label,
      'Restart to install 0.2.0',
    );
    assert.equal(
      trayMenu(running(), false).find((item) => item.id === 'status-update'),
      undefined,
    );
    const downloading = statusModel.update(running(), {
      state: 'downloading',
      version: '0.2.0',
      percent: 42,
    });
    assert.equal(
      trayMenu(downloading, false).find((item) => item.id === 'status-update')?.label,
      'Updates: downloading 0.2.0 (42%)',
    );
  });
});

describe('status model', () => {
  test('when more than 100 requests come, then the newest 100 are kept, newest first', () => {
    let snapshot = emptySnapshot();
    for (let i = 0; i < 105; i += 1) {
      snapshot = statusModel.request(snapshot, {
        at: new Date(i),
        method: 'GET',
        path: `/r${i}`,
        status: 200,
        origin: null,
        keyFingerprint: null,
      });
    }
    assert.equal(snapshot.requests.length, 100);
    assert.equal(snapshot.requests[0]?.path, '/r104');
    assert.equal(snapshot.requests[99]?.path, '/r5');
  });

  test('when an endpoint is rate limited again, then its row counts up and shows the latest hit', () => {
    let snapshot = emptySnapshot();
    const hit = (endpoint: string, at: number, origin: string | null) => ({
      at: new Date(at),
      endpoint,
      scope: 'key' as const,
      keyFingerprint: 'abcd1234',
      origin,
    });
    snapshot = statusModel.rateLimited(snapshot, hit('/readcard', 1, null));
    snapshot = statusModel.rateLimited(snapshot, hit('/info', 2, null));
    snapshot = statusModel.rateLimited(snapshot, hit('/readcard', 3, 'https://pos.example.com'));
    assert.deepEqual(
      snapshot.rateLimits.map((row) => [row.endpoint, row.count, row.lastAt, row.origin]),
      [
        ['/info', 1, new Date(2).toISOString(), null],
        ['/readcard', 2, new Date(3).toISOString(), 'https://pos.example.com'],
      ],
    );
  });
});

describe('updateTray', () => {
  test('when a snapshot is applied, then the tray gets its state icon, tooltip and a menu whose items act', async () => {
    const { updateTray } = await import('../../../main/tray.ts');
    const applied: {
      image?: string;
      tooltip?: string;
      menu?: { label?: string; click?: (item: { checked: boolean }) => void }[];
    } = {};
    const acted: string[] = [];
    const snapshot = statusModel.reader(
      running(),
      reader({ card: { cardId: '04A1B2C3', reader: 'ACS ACR122U', since: new Date(0) } }),
    );
    updateTray(
      {
        tray: {
          setImage: (image: unknown) => void (applied.image = image as string),
          setToolTip: (tooltip: string) => void (applied.tooltip = tooltip),
          setContextMenu: (menu: unknown) => void (applied.menu = menu as typeof applied.menu),
        } as never,
        icon: (state) => `icon:${state}` as never,
        buildMenu: (template) => template as never,
      },
      snapshot,
      false,
      {
        openWindow: () => acted.push('open'),
        copyUrl: () => acted.push('copy'),
        copyApiKey: () => acted.push('copy-key'),
        fixSmartCardService: () => acted.push('fix'),
        retryReader: () => acted.push('retry'),
        installUpdate: () => acted.push('install'),
        openLogFolder: () => acted.push('logs'),
        setStartAtLogin: (enabled) => acted.push(`login:${enabled}`),
        quit: () => acted.push('quit'),
      },
    );
    assert.equal(applied.image, 'icon:card-present');
    assert.equal(applied.tooltip, 'Card Wallet Worker: card 04A1B2C3');
    for (const label of [
      'Open window',
      'Copy service URL',
      'Copy API key',
      'Open log folder',
      'Start at login',
      'Quit',
    ]) {
      applied.menu?.find((item) => item.label === label)?.click?.({ checked: true });
    }
    assert.deepEqual(acted, ['open', 'copy', 'copy-key', 'logs', 'login:true', 'quit']);
  });

  const noActions = {
    openWindow: () => undefined,
    copyUrl: () => undefined,
    copyApiKey: () => undefined,
    fixSmartCardService: () => undefined,
    retryReader: () => undefined,
    installUpdate: () => undefined,
    openLogFolder: () => undefined,
    setStartAtLogin: () => undefined,
    quit: () => undefined,
  };
  const counting = (platform: NodeJS.Platform = 'linux') => {
    const tray = new FakeTray(platform);
    const parts = {
      tray: tray as never,
      icon: (state: string) => state as never,
      buildMenu: buildFakeMenu as never,
    };
    return { tray, calls: tray.calls, parts, actions: noActions };
  };

  test('when an HTTP request changes only the request list, then the tray and its open menu are left alone', async () => {
    const { trayUpdater } = await import('../../../main/tray.ts');
    const { calls, parts, actions } = counting();
    const tray = trayUpdater(parts, actions, 'win32');
    const first = running();
    tray.update(first, false);
    assert.deepEqual(calls, ['image', 'tooltip', 'menu']);
    const afterRequest = statusModel.request(first, {
      at: new Date(0),
      method: 'GET',
      path: '/v1/status',
      status: 200,
      origin: null,
      keyFingerprint: null,
    });
    tray.update(afterRequest, false);
    assert.deepEqual(calls, ['image', 'tooltip', 'menu']);
    tray.update(afterRequest, true);
    assert.deepEqual(calls, ['image', 'tooltip', 'menu', 'menu'], 'the login checkbox changed');
  });

  test('when "Start at login" is clicked but not saved, then the next update puts the checkbox back', async () => {
    const { trayUpdater } = await import('../../../main/tray.ts');
    const { tray, calls, parts } = counting();
    const asked: boolean[] = [];
    const updater = trayUpdater(
      parts,
      { ...noActions, setStartAtLogin: (enabled) => void asked.push(enabled) }, // the save fails
      'linux',
    );
    updater.update(running(), false);
    tray.item('Start at login').click(); // Electron ticks the native checkbox itself
    assert.deepEqual(asked, [true]);
    updater.update(running(), false);
    assert.deepEqual(calls, ['image', 'tooltip', 'menu', 'menu'], 'the menu was rebuilt');
    assert.equal(tray.item('Start at login').checked, false, 'it shows the saved setting');
  });

  test('when the service error makes the tooltip longer than Windows keeps, then it is shortened at a word with an ellipsis, not cut by Windows mid-word', async () => {
    const { trayUpdater } = await import('../../../main/tray.ts');
    const { tray, parts, actions } = counting('win32');
    const failed = statusModel.service(running(), {
      url: null,
      state: 'error',
      error:
        'port 4178 is in use by another program: choose another port in the settings and save, then the service starts again',
    });
    trayUpdater(parts, actions, 'win32').update(failed, false);
    assert.equal(tray.tooltip, tray.tooltipSet, 'Windows showed all of it: nothing was cut there');
    assert.ok(tray.tooltip.length <= 127, `${tray.tooltip.length}: ${tray.tooltip}`);
    assert.match(
      tray.tooltip,
      /^Card Wallet Worker: Needs attention \(port 4178 is in use .* and save…$/,
    );
  });

  test('when on macOS, then the menu is not attached (a left click opens the window) and a right click pops it up', async () => {
    const { trayUpdater } = await import('../../../main/tray.ts');
    const { calls, parts, actions } = counting();
    const tray = trayUpdater(parts, actions, 'darwin');
    tray.update(running(), false);
    assert.deepEqual(calls, ['image', 'tooltip']);
    tray.popUpMenu();
    assert.deepEqual(calls, ['image', 'tooltip', 'popup']);
  });
});
