/**
 * Why there is no usable reader, named so a host can say what to do about it (main/ words each
 * code for the tray and the window; the headless host logs the message). "No reader plugged in"
 * is not a problem: PC/SC is ready and lists no reader (ReaderStatus.readers is empty).
 */
export type ReaderProblemCode =
  /** Windows: SCardSvr starts only while a reader is plugged in (manual or trigger start). */
  | 'service-on-demand'
  /** The smart-card service (SCardSvr, pcscd) is set to start but does not run. */
  | 'service-stopped'
  /** Windows: SCardSvr is disabled. */
  | 'service-disabled'
  /** The PC/SC library (libpcsclite on Linux) or the binding's own file is missing. */
  | 'library-missing'
  /** The binding was built for another Node ABI (Node's vs Electron's). */
  | 'wrong-abi'
  /** Another program holds the reader (SCARD_E_SHARING_VIOLATION). */
  | 'reader-in-use'
  /** The process that holds the reader (the tray app's PC/SC host) hung or died. */
  | 'host-not-answering'
  /** A card the reader cannot identify or open. */
  | 'card-unreadable'
  /** Any other PC/SC failure, said as PC/SC says it. */
  | 'pcsc-error';

export interface ReaderProblem {
  code: ReaderProblemCode;
  /** What happened, for the log and the window's detail line. */
  message: string;
}

/**
 * A failure to load or construct the PC/SC binding. Loading fails without libpcsclite.so.1 on
 * Linux or when the binding was built for another Node ABI; constructing fails while the
 * platform's service is away (SCARD_E_NO_SERVICE, once the binding's own retry loop is gone:
 * patches/@pokusew+pcsclite+0.6.0.patch).
 */
export function loadProblem(message: string): ReaderProblem {
  if (/NODE_MODULE_VERSION|different Node\.js version|was compiled against/.test(message))
    return { code: 'wrong-abi', message };
  if (/libpcsclite|cannot open shared object|Cannot find module|MODULE_NOT_FOUND/.test(message))
    return { code: 'library-missing', message };
  if (/0x8010001d|0x8010001e|Service not available|service (was )?stopped/i.test(message))
    return { code: 'service-stopped', message };
  return { code: 'pcsc-error', message };
}

/**
 * A reader's own error (nfc-pcsc emits it on the Reader): another program holding the reader
 * (SCardConnect's 0x8010000B, SCARD_E_SHARING_VIOLATION), or a card it cannot read.
 * `detail` is nfc-pcsc's wrapped error (BaseError.previous), where PC/SC's own text is.
 */
export function readerErrorProblem(message: string, detail?: string): ReaderProblem {
  const said = detail && detail !== message ? `${message} (${detail})` : message;
  if (/0x8010000b|sharing violation|other connections outstanding/i.test(said))
    return { code: 'reader-in-use', message: said };
  return { code: 'card-unreadable', message: said };
}

/**
 * An error that knows which problem it is: what a PC/SC stand-in (the tray app's PC/SC host)
 * throws from createNfc or emits on its NFC, so the reader manager shows that problem as is.
 */
export class ReaderProblemError extends Error {
  readonly problem: ReaderProblem;

  constructor(problem: ReaderProblem) {
    super(problem.message);
    this.name = 'ReaderProblemError';
    this.problem = problem;
  }
}
