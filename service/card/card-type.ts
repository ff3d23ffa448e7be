/**
 * The card types the worker keeps wallets on, told apart per card by the ATR the PC/SC reader
 * builds for it (PC/SC part 3). A DESFire card's session then speaks to it natively, and a card
 * that answers otherwise fails its first command (CardOperationFailed).
 */
export type CardType = 'mifare-classic' | 'desfire';

/**
 * A contactless storage card's ATR is 3B 8F 80 01 80 4F 0C A0 00 00 03 06 SS NN NN ..: the
 * historical bytes start 80 4F with PC/SC's RID; MIFARE Classic is such a card (NN NN 00 01 1K,
 * 00 02 4K). Any other ATR is an ISO 14443-4 card, whose historical bytes are its ATS's (a
 * DESFire EV1, EV2 or EV3: 3B 81 80 01 80 80), taken for DESFire. No ATR (a reader that gives
 * none) is taken for a storage card, as nfc-pcsc does.
 */
export function cardTypeOfAtr(atr: Buffer | undefined): CardType {
  if (!atr || atr.length < 6) return 'mifare-classic';
  return atr[4] === 0x80 && atr[5] === 0x4f ? 'mifare-classic' : 'desfire';
}
