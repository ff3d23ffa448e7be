import type { ReaderStatus } from '../service/card/reader-manager.ts';
import type { ReaderProblemCode } from '../service/card/reader-problems.ts';

/** What the operator can do from the window or the tray about the reader. */
export type ReaderAction =
  /** Set the Smart Card service to start automatically (asks for an administrator). */
  | 'fix-service'
  /** Look for the reader now instead of at the next retry. */
  | 'retry';

/** Why there is no usable reader, in the operator's words, with what to do. */
export interface ReaderAdvice {
  /** Short: the tray's tooltip and the window's reader card. */
  title: string;
  /** What to do, in a sentence or two. */
  todo: string;
  /** The button (window) and menu item (tray) that does it, if one can. */
  action: { id: ReaderAction; label: string } | null;
}

const FIX_SERVICE = {
  id: 'fix-service',
  label: 'Set the smart-card service to start automatically',
} as const;
const RETRY = { id: 'retry', label: 'Check again' } as const;

type Platform = NodeJS.Platform;

const ADVICE: Record<ReaderProblemCode, (platform: Platform) => ReaderAdvice> = {
  'service-on-demand': () => ({
    title: 'Smart-card service starts only with a reader',
    todo: 'Plug in the card reader: Windows starts its smart-card service then. So that it always runs, set it to start automatically (Windows asks for an administrator, once).',
    action: FIX_SERVICE,
  }),
  'service-stopped': (platform) =>
    platform === 'win32'
      ? {
          title: 'Smart-card service stopped',
          todo: 'Plug the card reader in again, or start the smart-card service and set it to start automatically (Windows asks for an administrator).',
          action: FIX_SERVICE,
        }
      : platform === 'linux'
        ? {
            title: 'pcscd is not running',
            todo: 'Install and start the PC/SC daemon: sudo apt install pcscd (it starts with the reader), then Check again.',
            action: RETRY,
          }
        : {
            title: 'Smart-card service not available',
            todo: 'Unplug the reader and plug it in again, then Check again.',
            action: RETRY,
          },
  'service-disabled': () => ({
    title: 'Smart-card service disabled',
    todo: 'The Windows Smart Card service is disabled on this computer. Enable it and set it to start automatically (Windows asks for an administrator).',
    action: FIX_SERVICE,
  }),
  'library-missing': (platform) => ({
    title: 'PC/SC library missing',
    todo:
      platform === 'linux'
        ? 'Install it: sudo apt install pcscd libpcsclite1, then Check again.'
        : 'Part of the app is missing: reinstall Card Wallet Worker.',
    action: RETRY,
  }),
  'wrong-abi': () => ({
    title: 'Reader module does not fit this app',
    todo: 'Reinstall Card Wallet Worker. (Developers: npm run app rebuilds the module for Electron.)',
    action: null,
  }),
  'reader-in-use': () => ({
    title: 'Reader in use by another program',
    todo: 'Close the other program that uses the card reader (another card or payment program), then take the card off and put it back.',
    action: null,
  }),
  'host-not-answering': () => ({
    title: 'Reader connection restarted',
    todo: 'The part of the app that talks to the reader stopped answering and was restarted. If this repeats, unplug the reader and plug it in again, and send the log to support.',
    action: RETRY,
  }),
  'card-unreadable': () => ({
    title: 'Card not readable',
    todo: 'This card cannot be read here (not a MIFARE Classic wallet card, or moved too soon). Put it back flat on the reader, or hand it back.',
    action: null,
  }),
  'pcsc-error': () => ({
    title: 'Reader error',
    todo: 'Unplug the reader and plug it in again. If this repeats, send the log to support.',
    action: RETRY,
  }),
};

const NO_READER: ReaderAdvice = {
  title: 'No card reader',
  todo: 'Plug in the card reader (USB). It is found by itself.',
  action: null,
};

/**
 * What to tell the operator about the reader: null when a reader is ready. A problem that kept
 * PC/SC away wins; with PC/SC up and no reader, "no card reader"; a card's problem shows while
 * the reader is there.
 */
export function readerAdvice(
  reader: Pick<ReaderStatus, 'pcsc' | 'reader' | 'problem'>,
  platform: Platform,
): ReaderAdvice | null {
  if (reader.pcsc === 'ready' && reader.reader !== null) {
    return reader.problem?.code === 'card-unreadable' || reader.problem?.code === 'reader-in-use'
      ? ADVICE[reader.problem.code](platform)
      : null;
  }
  if (reader.problem) return ADVICE[reader.problem.code](platform);
  return reader.pcsc === 'ready' ? NO_READER : null;
}
