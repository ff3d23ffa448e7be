import { AppError, errors } from '../errors.ts';
import { DesfireProtocolError, DesfireStatusError } from './desfire/desfire-status.ts';

interface NfcError extends Error {
  code?: string | null;
  previous?: unknown;
}

/** Status words of a failed authentication (wrong key, or a sector the key does not open). */
const AUTH_STATUS = /Status code: 0x(6300|6982|6983|6985|6988)\b/;

/**
 * Turns what nfc-pcsc and the DESFire reader side throw into the spec's errors. The shapes are those of
 * docs/pcsc-test-rig.md ("Error shapes seen"): a wrong key is an AuthenticationError with
 * code operation_failed; a card that went away shows as card_not_connected, a TransmitError
 * (an SCardTransmit failure such as 0x80100069 or 0x80100016 on real readers) or, through
 * vpcd, "Invalid response length 0". All of those mean the card is gone: NoCard.
 */
export function toCardError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  // A DESFire card that refused a key (or holds none of that number) is a wrong key; any other
  // refusal, or an answer that does not verify, is a failed operation.
  if (error instanceof DesfireStatusError) {
    return error.is('AUTHENTICATION_ERROR') || error.is('NO_SUCH_KEY')
      ? errors.authenticationFail(error)
      : errors.cardOperationFailed(error);
  }
  if (error instanceof DesfireProtocolError) return errors.cardOperationFailed(error);
  const chain = errorChain(error);
  const top = chain[0];
  if (
    top?.name === 'AuthenticationError' &&
    top.code === 'operation_failed' &&
    AUTH_STATUS.test(top.message)
  ) {
    return errors.authenticationFail(error);
  }
  if (chain.some(isCardGone)) return errors.noCard(error);
  return errors.cardOperationFailed(error);
}

function isCardGone(error: NfcError): boolean {
  return (
    // nfc-pcsc's authenticate() reads the status word of the response without checking its
    // length; the empty answer of a card that left throws this RangeError (nfc-pcsc 0.8.1,
    // src/Reader.js authenticate: `response.readUInt16BE(0)`).
    error.code === 'ERR_BUFFER_OUT_OF_BOUNDS' ||
    error.code === 'card_not_connected' ||
    error.code === 'unable_to_load_key' ||
    error.name === 'TransmitError' ||
    // 0x8010000C (no smart card): SCardConnect after a card reset (CardSession) found none.
    /Invalid response length 0|Card Reader not connected|0x801000(69|16|68|67|0c)|removed|reset/i.test(
      error.message,
    )
  );
}

function errorChain(error: unknown): NfcError[] {
  const chain: NfcError[] = [];
  let current: unknown = error;
  while (current instanceof Error && chain.length < 5) {
    chain.push(current as NfcError);
    current = (current as NfcError).previous ?? current.cause;
  }
  return chain;
}
