import type { ReaderEvent } from '../service/card/reader-manager.ts';
import type { SimulatorStatus } from '../service/card/simulator/card-simulator.ts';
import type { CardAnswer } from '../service/http/activity.ts';
import type { FloatStatus } from '../service/wallet/float-status.ts';
import type { WorkerService } from '../service/worker-service.ts';
import { statusModel, type StatusSnapshot } from './status-model.ts';

/**
 * Follows a running service core and keeps the window's snapshot current from its events (no
 * polling): reader and card changes, requests, rate-limit hits, ledger reachability, the
 * movements waiting for the ledger, the till's name and back office from the ledger, and the
 * simulated cards when the simulator is on. Calls
 * `publish` with each new snapshot; returns `stop`.
 */
export function followService(
  service: WorkerService,
  initial: StatusSnapshot,
  publish: (snapshot: StatusSnapshot) => void,
): { snapshot: () => StatusSnapshot; stop: () => void } {
  let snapshot = statusModel.simulator(
    statusModel.float(
      statusModel.ledger(
        statusModel.reader(
          statusModel.till(
            statusModel.service(initial, { url: service.url, state: 'running', error: null }),
            service.tillId,
          ),
          service.readers.status,
        ),
        service.ledger,
        service.unconfirmedMovements,
        service.movementsWaitingForCard,
      ),
      service.float,
    ),
    service.simulator?.status() ?? null,
  );
  snapshot = statusModel.console(statusModel.tillName(snapshot, service.tillName), service.console);
  const update = (next: StatusSnapshot) => {
    snapshot = next;
    publish(snapshot);
  };
  const onReader = () => update(statusModel.reader(snapshot, service.readers.status));
  // A card put on the reader is read once, so the window shows its credits at a glance.
  const onReaderEvent = (event: ReaderEvent) => {
    if (event.type !== 'card-present') return;
    service.readers
      .withCard((session) => session.readWallet())
      .then(
        (wallet) =>
          update(statusModel.cardCredits(snapshot, wallet.cardId, wallet.balance, new Date())),
        () => undefined, // an unreadable card shows without credits; the POS gets the error
      );
  };
  const onRequest = (record: Parameters<typeof statusModel.request>[1]) =>
    update(statusModel.request(snapshot, record));
  const onRateLimited = (hit: Parameters<typeof statusModel.rateLimited>[1]) =>
    update(statusModel.rateLimited(snapshot, hit));
  const onLedger = () =>
    update(
      statusModel.ledger(
        snapshot,
        service.ledger,
        service.unconfirmedMovements,
        service.movementsWaitingForCard,
      ),
    );
  const onListening = ({ url }: { url: string }) =>
    update(statusModel.service(snapshot, { url, state: 'running', error: null }));
  const onCardAnswer = (answer: CardAnswer) =>
    update(
      statusModel.cardCredits(
        snapshot,
        answer.cardId,
        answer.credits,
        answer.at,
        answer.suspect,
        answer.suspectReason,
      ),
    );
  const onSimulator = (status: SimulatorStatus) => update(statusModel.simulator(snapshot, status));
  const onTill = (till: { name: string | null }) => {
    if (till.name !== snapshot.tillName) update(statusModel.tillName(snapshot, till.name));
  };
  const onConsole = (address: { url: string; setupUrl: string | null }) =>
    update(statusModel.console(snapshot, address));
  const onFloat = (status: FloatStatus) => update(statusModel.float(snapshot, status));
  service.readers.on('status', onReader);
  service.readers.on('event', onReaderEvent);
  service.activity.on('request', onRequest);
  service.activity.on('rate-limited', onRateLimited);
  service.activity.on('card-answer', onCardAnswer);
  service.on('ledger', onLedger);
  service.on('movements', onLedger);
  service.on('waitingForCard', onLedger);
  service.on('listening', onListening);
  service.on('till', onTill);
  service.on('console', onConsole);
  service.on('float', onFloat);
  service.simulator?.on('changed', onSimulator);
  return {
    snapshot: () => snapshot,
    stop() {
      service.readers.off('status', onReader);
      service.readers.off('event', onReaderEvent);
      service.activity.off('request', onRequest);
      service.activity.off('rate-limited', onRateLimited);
      service.activity.off('card-answer', onCardAnswer);
      service.off('ledger', onLedger);
      service.off('movements', onLedger);
      service.off('waitingForCard', onLedger);
      service.off('listening', onListening);
      service.off('till', onTill);
      service.off('console', onConsole);
      service.off('float', onFloat);
      service.simulator?.off('changed', onSimulator);
    },
  };
}
