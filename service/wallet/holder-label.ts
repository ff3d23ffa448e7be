import type { HolderLabelAnswer } from '../../common/ledger-contract.ts';
import { LedgerRefusal, type LedgerClient } from '../cloud/ledger-client.ts';
import { didYouMean } from '../did-you-mean.ts';
import { errors } from '../errors.ts';
import type { CardAccess } from './card-access.ts';

/** The most characters of a holder label (the ledger's bound). */
export const MAX_HOLDER_LABEL = 100;

/**
 * The body of POST /cards/holder: `{ "label": text }` puts the label on the card (trimmed, 1 to
 * 100 characters on one line), `{ "label": null }` deletes it. Anything else is 400 InvalidBody
 * with a detail: nothing is asked of the ledger.
 */
export function parseHolderLabelBody(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.invalidBody(
      'the body must be {"label": "a name or phone number"} to set it, or {"label": null} to delete it',
    );
  }
  const unknown = Object.keys(body).find((field) => field !== 'label');
  if (unknown !== undefined) {
    throw errors.invalidBody(
      `${JSON.stringify(unknown)}: not a field of /cards/holder, which takes label` +
        didYouMean(unknown, ['label']),
    );
  }
  const { label } = body as { label?: unknown };
  if (label === undefined) {
    throw errors.invalidBody('label: required (a name or phone number, or null to delete it)');
  }
  if (label === null) return null;
  const text = typeof label === 'string' ? label.trim() : '';
  // eslint-disable-next-line no-control-regex
  if (text === '' || text.length > MAX_HOLDER_LABEL || /[\u0000-\u001f\u007f]/.test(text)) {
    throw errors.invalidBody(
      `label: must be 1 to ${MAX_HOLDER_LABEL} characters on one line, or null to delete it`,
    );
  }
  return text;
}

/**
 * POST /cards/holder: puts the shop's optional holder label (a name or phone number) on the
 * card on the reader at the ledger, or deletes it (null), so a customer who loses the card can
 * be found (docs/integrators.md, "Holder labels"). Nothing is written on the card; a blocked
 * card may be labelled too. Needs the ledger: offline it is 500 LedgerUnavailable.
 */
export function setHolderLabel(
  cards: CardAccess,
  ledger: Pick<LedgerClient, 'setHolderLabel'>,
  apiKey: string,
  label: string | null,
): Promise<HolderLabelAnswer> {
  return cards.withCard(async (card) => {
    try {
      return await ledger.setHolderLabel(apiKey, card.cardId, label);
    } catch (error) {
      if (error instanceof LedgerRefusal) {
        throw errors.holderLabelRefused(
          `the ledger refused the label of card ${card.cardId}: ${error.code}${error.detail ? ` (${error.detail})` : ''}`,
        );
      }
      throw error;
    }
  });
}
