// The example POS page: every call of the local API through the client library (client/), and
// live card events. Plain browser JavaScript, no build step: index.html's import map says where
// the client is. See docs/integrators.md.
import { CardWalletClient, isCardWalletError, isMoneyError } from 'card-wallet-worker-client';

const $ = (testId) => document.querySelector(`[data-testid="${testId}"]`);

/** A client for what the cashier typed (the URL and the key may change between calls). */
const wallet = () =>
  new CardWalletClient({
    baseUrl: $('base-url').value,
    apiKey: $('api-key').value,
    // A rate limit being waited out is shown, not a frozen page.
    onRateLimitWait: ({ operation, seconds }) =>
      show(operation, 'waiting', `rate limited: trying again in ${seconds} s`, false),
  });

/** The last recharge or payout that failed: "Retry" sends that same movement again. */
let failedMovement;

/** Shows one call and its answer (status and body), or the failure to reach the service. */
function show(call, status, body, ok) {
  $('result-call').textContent = call;
  const statusElement = $('result-status');
  statusElement.textContent = status;
  statusElement.className = `status ${ok ? 'ok' : 'error'}`;
  $('result-body').textContent = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
}

/** A service running the card simulator says so on every answer. */
function noteSimulator(client) {
  if (client.simulated) $('simulator-banner').hidden = false;
}

/** Runs one call of the client and shows what came of it. */
async function run(label, call) {
  const client = wallet();
  try {
    const answer = await call(client);
    show(label, '200 OK', answer, true);
  } catch (error) {
    if (!isCardWalletError(error)) throw error;
    if (isMoneyError(error)) {
      // Its key and request are kept: a retry can only finish this movement, never pay twice.
      failedMovement = error;
      $('retry').disabled = false;
    }
    if (error.code === 'ServiceUnreachable') {
      // The browser says the same for a service that is down and for a refused origin.
      show(label, 'not reachable', `${error.detail} (this page is ${location.origin})`, false);
    } else {
      const body = error.detail
        ? { error: error.code, detail: error.detail }
        : { error: error.code };
      show(label, `${error.status} ${error.code}`, body, false);
    }
  } finally {
    noteSimulator(client);
  }
}

/** A new money movement, with the sale's reference when one is typed. */
function money(label, call) {
  const reference = $('reference').value.trim();
  failedMovement = undefined;
  $('retry').disabled = true;
  return run(label, (client) => call(client, reference === '' ? {} : { reference }));
}

$('ping').addEventListener('click', () => run('GET /ping', (c) => c.ping()));
$('readcard').addEventListener('click', () => run('GET /readcard', (c) => c.readCard()));
$('info').addEventListener('click', () => run('GET /info', (c) => c.info()));
$('recharge-credits').addEventListener('click', () =>
  money('POST /writecard', (c, options) =>
    c.rechargeCard({ credits: Number($('credits').value) }, options),
  ),
);
$('recharge-amount').addEventListener('click', () =>
  money('POST /writecard', (c, options) =>
    c.rechargeCard({ amount: Number($('amount').value) }, options),
  ),
);
$('discharge').addEventListener('click', () =>
  money('POST /dischargecard', (c, options) => c.dischargeCard(options)),
);
$('retry').addEventListener('click', () => {
  const error = failedMovement;
  if (!error) return;
  $('retry').disabled = true;
  failedMovement = undefined;
  return run(`retry (Idempotency-Key ${error.idempotencyKey})`, (c) => c.retry(error));
});
$('lookup').addEventListener('click', () =>
  run('GET /movements', (c) => c.movements({ reference: $('reference').value.trim() })),
);

// Waiting for a tap: the card events, not polling; cancellable.
let waiting;
$('wait-card').addEventListener('click', () => {
  waiting?.abort();
  waiting = new AbortController();
  const { signal } = waiting;
  show('waitForCard', 'waiting', 'present a card', false);
  return run('waitForCard', (c) => c.waitForCard({ signal, timeout: 120_000 })).catch((error) =>
    show('waitForCard', 'stopped', String(error?.message ?? error), false),
  );
});
$('wait-cancel').addEventListener('click', () => waiting?.abort(new Error('cancelled')));

// The card simulator's controls (docs/integrators.md, "Testing against the card simulator").
$('sim-place').addEventListener('click', () =>
  run('POST /simulator/place', (c) =>
    c.simulator.place({ credits: Number($('sim-credits').value) }),
  ),
);
$('sim-take-away').addEventListener('click', () =>
  run('POST /simulator/take-away', (c) => c.simulator.takeAway()),
);
$('sim-put-back').addEventListener('click', () =>
  run('POST /simulator/put-back', (c) => c.simulator.putBack($('sim-card-id').value.trim())),
);
$('sim-fault-arm').addEventListener('click', () =>
  run('POST /simulator/fault', (c) => c.simulator.fault($('sim-fault').value)),
);
$('sim-status').addEventListener('click', () => run('GET /simulator', (c) => c.simulator.status()));

// Card events: the client reads GET /events (an EventSource cannot send X-Api-Key) and resumes
// with Last-Event-ID after a drop, so no event is missed.
let listening;

function logEvent(text) {
  const item = document.createElement('li');
  item.textContent = `${new Date().toLocaleTimeString()} ${text}`;
  $('events').prepend(item);
}

function setEventState(text, ok) {
  const element = $('events-state');
  element.textContent = text;
  element.className = `status ${ok ? 'ok' : 'error'}`;
}

function describe(event) {
  if (event.type === 'card') return `${event.data.type} ${event.data.cardId}`;
  return `${event.data.state}${event.data.reader ? ` (${event.data.reader})` : ''}`;
}

async function listen(signal) {
  const client = wallet();
  const onReconnect = (problem) =>
    setEventState(
      problem.code === 'ServiceUnreachable'
        ? `not reachable: ${problem.detail}`
        : `refused: ${problem.status} ${problem.code}`,
      false,
    );
  try {
    for await (const event of client.cardEvents({ signal, onReconnect })) {
      setEventState('listening', true);
      logEvent(`${event.type} ${describe(event)}`);
      noteSimulator(client);
    }
  } catch (error) {
    if (!isCardWalletError(error)) throw error;
    setEventState(`refused: ${error.status} ${error.code}`, false);
    return;
  }
  setEventState('not listening', false);
}

$('events-connect').addEventListener('click', () => {
  listening?.abort();
  listening = new AbortController();
  void listen(listening.signal);
});
$('events-disconnect').addEventListener('click', () => listening?.abort());
