// The status window. It talks only to the preload bridge, window.cardWallet: it renders each
// status snapshot main pushes (no polling) and edits the settings.

const bridge = window.cardWallet;
const $ = (testId) => document.querySelector(`[data-testid="${testId}"]`);
const time = (iso) => (iso ? new Date(iso).toLocaleTimeString() : '-');

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function fillTable(testId, rows) {
  const body = $(testId).querySelector('tbody');
  body.replaceChildren(
    ...rows.map((cells) => {
      const tr = document.createElement('tr');
      tr.append(...cells);
      return tr;
    }),
  );
}

function badge(element, text, good) {
  element.textContent = text;
  element.className = `badge ${good === null ? '' : good ? 'ok' : 'bad'}`;
}

function render(snapshot) {
  const { service, reader, card, lastCard, rateLimits, requests, ledger, simulator } = snapshot;
  // Said at the top whenever the running service uses the simulator: its cards are not real.
  const simulated = simulator !== null && service.state === 'running';
  $('simulator-banner').hidden = !simulated;
  $('simulator-panel').hidden = !simulated;
  if (simulated) renderSimulator(simulator);
  badge(
    $('service-state'),
    service.state === 'error' ? `error: ${service.error}` : service.state,
    service.state === 'running',
  );
  $('service-url').textContent = service.url ?? '-';
  $('copy-url').disabled = !service.url; // starting or failed: nothing to copy

  $('reader-name').textContent = reader.name ?? 'no reader';
  $('reader-state').textContent =
    reader.pcsc === 'ready'
      ? reader.problem
        ? reader.problem
        : 'ready'
      : reader.pcsc === 'unavailable'
        ? 'PC/SC service not running'
        : reader.pcsc;

  $('card-id').textContent = card ? card.cardId : 'none';
  $('card-detail').textContent = card
    ? `since ${time(card.since)}`
    : simulated
      ? 'place one in the card simulator'
      : 'put a card on the reader';
  $('last-card-id').textContent = lastCard ? lastCard.cardId : 'none yet';
  $('last-card-detail').textContent = lastCard
    ? `${lastCard.credits === null ? 'credits not read' : `${lastCard.credits} credits`} at ${time(lastCard.at)}`
    : '-';
  // The ledger refused to pay this card out and flagged it (CardAccountExceeded).
  $('last-card-suspect').hidden = !lastCard?.suspect;

  $('ledger-state').textContent =
    ledger.reachable === null ? 'not asked yet' : ledger.reachable ? 'reachable' : 'not reachable';
  $('ledger-state').classList.toggle('warning', ledger.reachable === false);
  $('ledger-waiting').textContent =
    ledger.unconfirmedMovements === 0
      ? 'no movement waiting'
      : `${ledger.unconfirmedMovements} movement(s) waiting for confirmation`;
  $('ledger-waiting').classList.toggle('warning', ledger.unconfirmedMovements > 0);
  // Reserved at the ledger, decided by what the card holds when it is presented again.
  const forCard = $('ledger-waiting-for-card');
  forCard.hidden = ledger.waitingForCard.length === 0;
  forCard.textContent =
    ledger.waitingForCard.length === 0
      ? ''
      : `Put back card(s) to finish: ${ledger.waitingForCard
          .map(
            (entry) =>
              `${entry.kind} of ${entry.credits} on card ${entry.cardId} (since ${time(entry.since)})`,
          )
          .join('; ')}`;

  fillTable(
    'rate-limits',
    rateLimits.map((row) => [
      cell(row.endpoint),
      cell(String(row.count)),
      cell(time(row.lastAt)),
      cell(row.keyFingerprint ?? 'address'),
      cell(row.origin ?? 'local program'),
    ]),
  );
  $('rate-limits-empty').hidden = rateLimits.length > 0;
  fillTable(
    'requests',
    requests.map((row) => [
      cell(time(row.at)),
      cell(`${row.method} ${row.path}`),
      cell(
        String(row.status),
        row.status >= 500 ? 'status-5xx' : row.status >= 400 ? 'status-4xx' : '',
      ),
      cell(row.origin ?? 'local program'),
    ]),
  );
}

// The card simulator (only when the service runs with it): the actions of its control API.

const credits = (value) => (value === null ? 'unreadable' : `${value} credits`);
let shownCards = '';

function renderSimulator({ card, cards }) {
  // Redrawn only when the cards change, so a button is not replaced under the pointer.
  const shown = JSON.stringify({ card, cards });
  if (shown === shownCards) return;
  shownCards = shown;
  fillTable(
    'sim-cards',
    cards.map((known) => {
      const where = document.createElement('td');
      if (known.cardId === card?.cardId) where.textContent = 'on the reader';
      else {
        const button = document.createElement('button');
        button.type = 'button';
        button.textContent = 'Put back';
        button.dataset.cardId = known.cardId;
        button.dataset.testid = 'sim-put-back';
        where.append(button);
      }
      return [cell(known.cardId), cell(credits(known.credits)), where];
    }),
  );
  $('sim-cards-empty').hidden = cards.length > 0;
}

/** Says on the line `testId` what came of an action, as done (`ok`) or as a problem. */
function say(testId, ok, text) {
  const line = $(testId);
  line.textContent = text;
  line.className = ok ? 'saved' : 'problems';
  line.setAttribute('role', ok ? 'status' : 'alert');
  line.hidden = false;
}

/** Runs one simulator action and says what came of it. */
async function simulate(action, describe) {
  const result = await action();
  say('sim-result', result.ok, result.ok ? describe(result.status) : result.error);
}

const inField = (status) =>
  status.card ? `card ${status.card.cardId}, ${credits(status.card.credits)}` : 'no card';
const optionalNumber = (input) => (input.value.trim() === '' ? undefined : Number(input.value));
const placeForm = $('sim-place-form');
const faultForm = $('sim-fault-form');

placeForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const request = {
    credits: optionalNumber(placeForm.credits),
    uid: placeForm.uid.value.trim() || undefined,
  };
  void simulate(
    () => bridge.placeSimulatedCard(request),
    (status) => `Placed: ${inField(status)}.`,
  );
});
$('sim-take-away').addEventListener('click', () => {
  void simulate(
    () => bridge.takeAwaySimulatedCard(),
    () => 'The card was taken away.',
  );
});
$('sim-cards').addEventListener('click', (event) => {
  const cardId = event.target.closest('button[data-card-id]')?.dataset.cardId;
  if (!cardId) return;
  void simulate(
    () => bridge.putBackSimulatedCard({ cardId }),
    (status) => `Put back: ${inField(status)}.`,
  );
});
faultForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const fault = faultForm.fault.value;
  const delayMs = fault === 'slow' ? optionalNumber(faultForm.delayMs) : undefined;
  void simulate(
    () => bridge.armSimulatorFault({ fault, delayMs }),
    (status) =>
      fault === 'none'
        ? `Faults disarmed on ${inField(status)}.`
        : `Armed ${fault} on ${inField(status)}.`,
  );
});

// Personalization: the card on the reader gets its own keys (docs/card-security.md).

const personalized = ({ cardId, credits, alreadyPersonalized }) =>
  alreadyPersonalized
    ? `Card ${cardId} was already personalized; nothing was written.`
    : `Card ${cardId} is personalized: it has its own keys now (${credits} credits).`;

$('personalize-card').addEventListener('click', async (event) => {
  const button = event.currentTarget;
  button.disabled = true;
  $('personalize-result').hidden = true;
  try {
    const result = await bridge.personalizeCard();
    say('personalize-result', result.ok, result.ok ? personalized(result.card) : result.error);
  } finally {
    button.disabled = false;
  }
});

// Settings

const form = $('settings');

/** The card master key is never shown, only whether one is set; a new one replaces it. */
function showMasterKey(set) {
  form.cardMasterKey.value = '';
  form.cardMasterKey.disabled = false;
  form.clearCardMasterKey.checked = false;
  form.clearCardMasterKey.disabled = !set;
  $('master-key-state').textContent = set
    ? 'set; type a new one to replace it'
    : 'not set: every card opens with the card key';
}

function showSettings({ settings, plainTextKeyStorage, recovery }) {
  form.apiKey.value = settings.apiKey;
  form.allowedOrigins.value = settings.allowedOrigins.join('\n');
  form.port.value = String(settings.port);
  form.cloudUrl.value = settings.cloudUrl ?? '';
  form.reader.value = settings.reader ?? '';
  form.cardKey.value = settings.cardKey;
  form.cardKeyType.value = settings.cardKeyType;
  form.walletSector.value = String(settings.walletSector);
  form.startAtLogin.checked = settings.startAtLogin;
  form.simulator.checked = settings.simulator;
  form.autoPersonalize.checked = settings.autoPersonalize;
  form.refuseCardsAboveAccount.checked = settings.refuseCardsAboveAccount;
  showMasterKey(settings.cardMasterKeySet);
  $('plain-text-warning').hidden = !plainTextKeyStorage;
  // Settings set aside at start: say why, and put the operator on the key to enter again.
  $('settings-recovery').textContent = recovery ?? '';
  $('settings-recovery').hidden = recovery === null;
  if (recovery !== null) form.apiKey.focus();
}

function readSettings() {
  return {
    apiKey: form.apiKey.value.trim(),
    allowedOrigins: form.allowedOrigins.value
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean),
    port: Number(form.port.value),
    cloudUrl: form.cloudUrl.value.trim() || null,
    reader: form.reader.value.trim() || null,
    cardKey: form.cardKey.value.trim(),
    cardKeyType: form.cardKeyType.value,
    walletSector: Number(form.walletSector.value),
    startAtLogin: form.startAtLogin.checked,
    simulator: form.simulator.checked,
    autoPersonalize: form.autoPersonalize.checked,
    refuseCardsAboveAccount: form.refuseCardsAboveAccount.checked,
    // Absent: the stored key is kept; null: cleared; text: the new key.
    cardMasterKey: form.clearCardMasterKey.checked
      ? null
      : form.cardMasterKey.value.trim() || undefined,
  };
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const problems = $('settings-problems');
  const saved = $('settings-saved');
  problems.hidden = true;
  saved.hidden = true;
  const result = await bridge.saveSettings(readSettings());
  if (!result.ok) {
    problems.replaceChildren(
      ...result.problems.map((problem) => {
        const item = document.createElement('li');
        item.textContent = problem.message;
        return item;
      }),
    );
    problems.hidden = false;
    return;
  }
  saved.textContent = result.restarted
    ? 'Saved; the service restarted with the new settings.'
    : 'Saved; in effect now.';
  saved.hidden = false;
  showMasterKey((await bridge.getSettings()).settings.cardMasterKeySet);
});

form.clearCardMasterKey.addEventListener('change', () => {
  form.cardMasterKey.disabled = form.clearCardMasterKey.checked;
});

$('show-key').addEventListener('click', (event) => {
  const showing = form.apiKey.type === 'text';
  form.apiKey.type = showing ? 'password' : 'text';
  event.currentTarget.textContent = showing ? 'Show' : 'Hide';
  event.currentTarget.setAttribute('aria-pressed', String(!showing));
});
$('copy-url').addEventListener('click', () => void bridge.copyServiceUrl());

bridge.onStatus(render);
render(await bridge.getStatus());
showSettings(await bridge.getSettings());
