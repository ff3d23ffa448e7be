import type { StatusSnapshot } from './status-model.ts';

/** The tray icon's four states, one icon each (main/assets/tray-<state>.png). */
export type TrayState = 'no-reader' | 'ready' | 'card-present' | 'error';

export interface TrayMenuItem {
  id: string;
  label: string;
  enabled: boolean;
  type?: 'normal' | 'checkbox' | 'separator';
  checked?: boolean;
}

/**
 * The icon's state: an error wins, then whether there is a usable reader (one held by another
 * program is not), then a card on it.
 */
export function trayState(snapshot: StatusSnapshot): TrayState {
  if (snapshot.service.state === 'error' || snapshot.service.state === 'stopped') return 'error';
  if (snapshot.ledger.reachable === false && snapshot.ledger.unconfirmedMovements > 0)
    return 'error';
  if (
    snapshot.reader.pcsc !== 'ready' ||
    snapshot.reader.name === null ||
    snapshot.reader.problem?.code === 'reader-in-use'
  )
    return 'no-reader';
  return snapshot.card ? 'card-present' : 'ready';
}

const STATE_TEXT: Record<TrayState, string> = {
  'no-reader': 'No card reader',
  ready: 'Ready',
  'card-present': 'Card on the reader',
  error: 'Needs attention',
};

/**
 * What a card the ledger refused to pay out is, in the tooltip (at most 127 characters on
 * Windows, with a 14-digit card ID); the window says it in full.
 */
const SUSPECT_TEXT =
  'flagged suspect by the ledger (discharge refused: holds more than the shop put on it)';

/** One short line for the tooltip (platforms cut long ones). */
export function trayTooltip(snapshot: StatusSnapshot): string {
  const state = trayState(snapshot);
  if (state === 'error') {
    const why =
      snapshot.service.error ??
      (snapshot.ledger.unconfirmedMovements > 0
        ? `${snapshot.ledger.unconfirmedMovements} movement(s) waiting for the ledger`
        : 'service stopped');
    return `Card Wallet Worker: ${STATE_TEXT[state]} (${why})`;
  }
  // The operator must not pay this card out: said before anything that is fine.
  if (snapshot.lastCard?.suspect)
    return `Card Wallet Worker: card ${snapshot.lastCard.cardId} ${snapshot.lastCard.suspectText ?? SUSPECT_TEXT}`;
  // Not an error (the card decides them when it is presented again), but worth a look.
  const waiting = snapshot.ledger.waitingForCard.length;
  const note = waiting > 0 ? ` (${waiting} movement(s) wait for their card)` : '';
  if (state === 'card-present' && snapshot.card)
    return `Card Wallet Worker: card ${snapshot.card.cardId}${note}`;
  // Why there is no reader, said as the window says it (main/reader-advice.ts).
  const said = snapshot.reader.advice?.title ?? STATE_TEXT[state];
  return `Card Wallet Worker: ${said}${note}`;
}

/** The update line of the menu; none while updates are off. */
function updateLine(update: StatusSnapshot['update']): string | null {
  switch (update.state) {
    case 'off':
      return null;
    case 'unsupported':
      return 'Updates: not for this copy';
    case 'checking':
      return 'Updates: checking';
    case 'up-to-date':
      return 'Updates: up to date';
    case 'downloading':
      return `Updates: downloading ${update.version}${update.percent === null ? '' : ` (${update.percent}%)`}`;
    case 'ready':
      return `Updates: ${update.version} ready${update.installs ? `, installs ${update.installs}` : ''}`;
    case 'installing':
      return `Updates: installing ${update.version}`;
    case 'failed':
      return 'Updates: the last check failed (see the log)';
  }
}

/** The menu: status lines (disabled), then the actions. */
export function trayMenu(snapshot: StatusSnapshot, startAtLogin: boolean): TrayMenuItem[] {
  const lastCard = snapshot.lastCard
    ? `Last card: ${snapshot.lastCard.cardId}${snapshot.lastCard.credits === null ? '' : ` (${snapshot.lastCard.credits} credits)`}${snapshot.lastCard.suspect ? ', flagged suspect' : ''}`
    : 'Last card: none yet';
  const readerLine =
    snapshot.reader.name !== null && snapshot.reader.advice === null
      ? snapshot.reader.name
      : (snapshot.reader.advice?.title ?? STATE_TEXT['no-reader']).toLowerCase();
  const update = updateLine(snapshot.update);
  const readerAction = snapshot.reader.advice?.action ?? null;
  const items: (TrayMenuItem | null)[] = [
    {
      id: 'status-service',
      label: `Service: ${snapshot.service.url ?? snapshot.service.state}`,
      enabled: false,
    },
    { id: 'status-reader', label: `Reader: ${readerLine}`, enabled: false },
    { id: 'status-card', label: lastCard, enabled: false },
    update === null ? null : { id: 'status-update', label: update, enabled: false },
    { id: 'separator-1', label: '', enabled: true, type: 'separator' },
    { id: 'open-window', label: 'Open window', enabled: true },
    { id: 'copy-url', label: 'Copy service URL', enabled: snapshot.service.url !== null },
    { id: 'copy-api-key', label: 'Copy API key', enabled: true },
    readerAction === null
      ? null
      : {
          id: `reader-${readerAction.id}`,
          // The fix opens Windows' administrator prompt: the ellipsis says more is asked.
          label: readerAction.id === 'fix-service' ? `${readerAction.label}…` : readerAction.label,
          enabled: true,
        },
    snapshot.update.state === 'ready'
      ? {
          id: 'install-update',
          label: `Restart to install ${snapshot.update.version}`,
          enabled: true,
        }
      : null,
    { id: 'open-log-folder', label: 'Open log folder', enabled: true },
    {
      id: 'start-at-login',
      label: 'Start at login',
      enabled: true,
      type: 'checkbox',
      checked: startAtLogin,
    },
    { id: 'separator-2', label: '', enabled: true, type: 'separator' },
    { id: 'quit', label: 'Quit', enabled: true },
  ];
  return items.filter((item): item is TrayMenuItem => item !== null);
}
