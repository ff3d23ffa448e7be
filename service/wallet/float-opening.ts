import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import { LedgerRefusal, type LedgerClient, type LedgerFloat } from '../cloud/ledger-client.ts';
import type { MovementBook } from './movement-book.ts';

/** Movement ids the open hands out, and a top-up asks for when few are left. */
export const IDS_PER_REQUEST = 100;

/**
 * Opening the till's float (docs/cloud-api.md, "Till floats"), and a float of this till that
 * its journal does not know: the open request is journaled before it is sent and sent again,
 * the same id, until answered. Before a new one, the ledger is asked whether it holds an open
 * float of this till: one it does but the journal does not know was opened by this till before
 * its journal was lost, and nothing is sold from it (nor a new one opened) until an operator
 * closed it.
 */
export class FloatOpening {
  readonly #book: MovementBook;
  readonly #ledger: Pick<LedgerClient, 'openFloat' | 'getTillFloat'>;

  constructor(book: MovementBook, ledger: Pick<LedgerClient, 'openFloat' | 'getTillFloat'>) {
    this.#book = book;
    this.#ledger = ledger;
  }

  async open(apiKey: string, keyFingerprint: string): Promise<void> {
    let opening = this.#book.journal.floats.opening;
    if (!opening || opening.keyFingerprint !== keyFingerprint) {
      // A float of this till the journal does not know: the journal was lost.
      const unknown = await this.#tillFloat(apiKey);
      if (unknown) return this.#lost(unknown);
      await this.#book.append({
        type: 'float-open',
        requestId: this.#book.newId(),
        keyFingerprint,
      });
      opening = this.#book.journal.floats.opening as NonNullable<typeof opening>;
    }
    let float: LedgerFloat;
    try {
      float = await this.#ledger.openFloat(apiKey, {
        tillId: this.#book.tillId,
        requestId: opening.requestId,
        ids: IDS_PER_REQUEST,
      });
    } catch (error) {
      if (!(error instanceof LedgerRefusal && error.code === ledgerErrorCodes.floatOpen.code))
        throw error;
      const unknown = await this.#tillFloat(apiKey);
      if (unknown) await this.#lost(unknown);
      return;
    }
    await this.#book.append({
      type: 'float',
      floatId: float.id,
      requestId: opening.requestId,
      keyFingerprint,
      prefix: float.idPrefix,
      idsIssued: float.idsIssued,
      granted: float.granted,
    });
    this.#book.log.info(`float ${float.id} opened: ${float.credits} credits`);
  }

  /** The ledger's open float of this till, if any. */
  async #tillFloat(apiKey: string): Promise<LedgerFloat | undefined> {
    try {
      return await this.#ledger.getTillFloat(apiKey, this.#book.tillId);
    } catch (error) {
      if (error instanceof LedgerRefusal && error.code === ledgerErrorCodes.floatNotFound.code) {
        return undefined;
      }
      throw error;
    }
  }

  async #lost(float: LedgerFloat): Promise<void> {
    this.#book.log.error(
      `float ${float.id} of this till is open at the ledger but not in this till's journal (was its data folder lost?): nothing is sold from it until an operator closes it (card-wallet-cloud float close)`,
    );
    await this.#book.append({ type: 'float-lost', floatId: float.id, lost: true });
  }

  async stillLost(apiKey: string, floatId: string): Promise<void> {
    const open = await this.#tillFloat(apiKey);
    if (open?.id === floatId) return;
    await this.#book.append({ type: 'float-lost', floatId, lost: false });
    this.#book.log.info(
      `float ${floatId}, unknown to this till's journal, is closed: a new one follows`,
    );
  }
}
