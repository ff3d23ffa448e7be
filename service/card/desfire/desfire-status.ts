/**
 * MIFARE DESFire status codes (the second status byte of an ISO-wrapped answer, 91 xx) and the
 * typed errors the reader side throws. Names as the DESFire EV1 datasheet gives them.
 */
export const DESFIRE_STATUS = {
  OPERATION_OK: 0x00,
  NO_CHANGES: 0x0c,
  OUT_OF_EEPROM_ERROR: 0x0e,
  ILLEGAL_COMMAND_CODE: 0x1c,
  INTEGRITY_ERROR: 0x1e,
  NO_SUCH_KEY: 0x40,
  LENGTH_ERROR: 0x7e,
  PERMISSION_DENIED: 0x9d,
  PARAMETER_ERROR: 0x9e,
  APPLICATION_NOT_FOUND: 0xa0,
  APPL_INTEGRITY_ERROR: 0xa1,
  AUTHENTICATION_ERROR: 0xae,
  ADDITIONAL_FRAME: 0xaf,
  BOUNDARY_ERROR: 0xbe,
  PICC_INTEGRITY_ERROR: 0xc1,
  COMMAND_ABORTED: 0xca,
  PICC_DISABLED_ERROR: 0xcd,
  COUNT_ERROR: 0xce,
  DUPLICATE_ERROR: 0xde,
  EEPROM_ERROR: 0xee,
  FILE_NOT_FOUND: 0xf0,
  FILE_INTEGRITY_ERROR: 0xf1,
} as const;

export type DesfireStatusName = keyof typeof DESFIRE_STATUS;

const NAMES = new Map<number, DesfireStatusName>(
  Object.entries(DESFIRE_STATUS).map(([name, code]) => [code, name as DesfireStatusName]),
);

export function statusName(code: number): string {
  return NAMES.get(code) ?? `0x${code.toString(16).padStart(2, '0').toUpperCase()}`;
}

/** The card answered a command with an error status: it did not do it. */
export class DesfireStatusError extends Error {
  readonly status: number;
  readonly command: number;

  constructor(command: number, status: number) {
    super(
      `DESFire command 0x${command.toString(16).padStart(2, '0').toUpperCase()} answered ${statusName(status)}`,
    );
    this.name = 'DesfireStatusError';
    this.status = status;
    this.command = command;
  }

  is(name: DesfireStatusName): boolean {
    return this.status === DESFIRE_STATUS[name];
  }
}

/**
 * An answer this side cannot trust or understand: a CMAC or CRC that does not verify, a
 * length that does not fit, an ISO status word that is not DESFire's. Whatever the command was
 * meant to change may or may not have changed.
 */
export class DesfireProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DesfireProtocolError';
  }
}
