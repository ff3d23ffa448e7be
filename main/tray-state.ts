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

/** The icon's state: an error wins, then whether there is a reader, then a card on it. */
export function trayState(snapshot: StatusSnapshot): TrayState {
  if (snapshot.service.state === 'error' || snapshot.service.state === 'stopped') return 'error';
  if (snapshot.ledger.reachable === false && snapshot.ledger.unconfirmedMovements > 0)
    return 'error';
  if (snapshot.reader.pcsc !== 'ready' || snapshot.reader.name === null) return 'no-reader';
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
    return `Card Wallet Worker: card ${snapshot.lastCard.cardId} ${SUSPECT_TEXT}`;
  // Not an error (the card decides them when it is presented again), but worth a look.
  const waiting = snapshot.ledger.waitingForCard.length;
  const note = waiting > 0 ? ` (${waiting} movement(s) wait for their card)` : '';
  if (state === 'card-present' && snapshot.card)
    return `Card Wallet Worker: card ${snapshot.card.cardId}${note}`;
  return `Card Wallet Worker: ${STATE_TEXT[state]}${note}`;
}

/** The menu: status lines (disabled), then the actions. */
export function trayMenu(snapshot: StatusSnapshot, startAtLogin: boolean): TrayMenuItem[] {
  const lastCard = snapshot.lastCard
    ? `Last card: ${snapshot.lastCard.cardId}${snapshot.lastCard.credits === null ? '' : ` (${snapshot.lastCard.credits} credits)`}${snapshot.lastCard.suspect ? ', flagged suspect' : ''}`
    : 'Last card: none yet';
  return [
    {
      id: 'status-service',
      label: `Service: ${snapshot.service.url ?? snapshot.service.state}`,
      enabled: false,
    },
    {
      id: 'status-reader',
      label: `Reader: ${snapshot.reader.name ?? STATE_TEXT['no-reader'].toLowerCase()}`,
      enabled: false,
    },
    { id: 'status-card', label: lastCard, enabled: false },
    { id: 'separator-1', label: '', enabled: true, type: 'separator' },
    { id: 'open-window', label: 'Open window', enabled: true },
    { id: 'copy-url', label: 'Copy service URL', enabled: snapshot.service.url !== null },
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
}
