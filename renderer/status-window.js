// The status window. It talks only to the preload bridge, window.cardWallet: it renders each
// status snapshot main pushes (no polling) and edits the settings.

const bridge = window.cardWallet;
const $ = (testId) => document.querySelector(`[data-testid="${testId}"]`);
const time = (iso) => (iso ? new Date(iso).toLocaleTimeString() : '-');
// What the last-card panel says of a card the ledger refused to pay out, as the page has it.
const ACCOUNT_SUSPECT = $('last-card-suspect').textContent.replace(/\s+/g, ' ').trim();
const DO_NOT_PAY = "Do not pay it out; keep the card and call the shop's provider.";

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function fillTable(testId, rows) {
  const table = $(testId);
  // Each cell carries its column's name: a narrow window shows a row as labelled lines.
  const labels = [...table.querySelectorAll('thead th')].map((th) => th.textContent);
  table.querySelector('tbody').replaceChildren(
    ...rows.map((cells) => {
      const tr = document.createElement('tr');
      cells.forEach((td, i) => (td.dataset.label = labels[i] ?? ''));
      tr.append(...cells);
      return tr;
    }),
  );
}

function badge(element, text, good) {
  element.textContent = text;
  element.className = `badge ${good === null ? '' : good ? 'ok' : 'bad'}`;
}

/** The settings as main/ last gave them (settings:get): the key hint, the locked state. */
let view = null;
/** The snapshot last rendered, for the header when the settings change. */
let shown = null;

/**
 * The one thing to say at the top, and the one thing to do about it: the service's keys locked,
 * the service not running, the reader, connecting the POS; nothing to do once the POS calls.
 */
function headline(snapshot) {
  const { service, reader, requests, simulator } = snapshot;
  if (view?.locked)
    return {
      text: 'The service waits for its keys',
      detail: 'Unlock the keychain (or keyring), then Retry; or enter the API key again below.',
      action: { label: 'Retry', run: unlockSettings },
    };
  if (service.state === 'error' || service.state === 'stopped')
    return {
      text: 'The service is not running',
      detail: service.error ?? 'See the settings.',
      action: { label: 'Open the settings', run: openSettings },
    };
  if (service.state === 'starting') return { text: 'Starting…', detail: '', action: null };
  if (reader.advice && simulator === null)
    return {
      text: reader.advice.title,
      detail: reader.advice.todo,
      action: reader.advice.action && {
        label: reader.advice.action.label,
        run: () => readerAction(reader.advice.action.id),
      },
    };
  if (requests.length === 0)
    return {
      text: 'Ready: connect the POS',
      detail:
        'Enter the service URL and the API key in the POS; its first request shows here as it arrives.',
      action: { label: 'Copy API key', run: copyApiKey },
    };
  return {
    text: 'Ready',
    detail: `Last request from the POS: ${describeRequest(requests[0])}`,
    action: null,
  };
}

let headlineAction = null;
function renderHeadline(snapshot) {
  const said = headline(snapshot);
  $('headline').textContent = said.text;
  $('headline-detail').textContent = said.detail;
  const button = $('call-to-action');
  button.hidden = said.action === null;
  button.textContent = said.action?.label ?? '';
  headlineAction = said.action?.run ?? null;
}

const describeRequest = (request) =>
  `${request.method} ${request.path} → ${request.status} at ${time(request.at)}${request.origin ? ` from ${request.origin}` : ''}`;

/** Banners: a start-up error, locked or recovered settings, and main's notices. */
function renderBanners(snapshot) {
  const { service } = snapshot;
  const failed = service.state === 'error' && !view?.locked;
  $('startup-error').hidden = !failed;
  $('startup-error-text').textContent = failed ? service.error : '';
  $('settings-locked').hidden = !view?.locked;
  $('settings-locked-text').textContent = view?.locked ?? '';
  $('notices').replaceChildren(
    ...snapshot.notices
      .filter((notice) => notice.id !== 'settings-locked')
      .map((notice) => {
        const item = document.createElement('li');
        item.className = `banner ${notice.level}`;
        item.dataset.testid = 'notice';
        item.setAttribute('role', notice.level === 'error' ? 'alert' : 'status');
        const text = document.createElement('p');
        const title = document.createElement('strong');
        title.textContent = notice.title;
        text.append(title, ` ${notice.text}`);
        item.append(text);
        if (notice.action === 'open-log-folder')
          item.append(button('Open log folder', 'notice-action', openLogFolder));
        item.append(
          button('Dismiss', 'notice-dismiss', () => void bridge.dismissNotice(notice.id)),
        );
        return item;
      }),
  );
}

function button(label, testId, onClick) {
  const element = document.createElement('button');
  element.type = 'button';
  element.textContent = label;
  element.dataset.testid = testId;
  element.addEventListener('click', onClick);
  return element;
}

function renderReader(reader, simulated) {
  $('reader-name').textContent = reader.name ?? 'no reader';
  const advice = simulated ? null : reader.advice;
  $('reader-state').textContent =
    reader.pcsc === 'ready' && reader.name !== null && !advice
      ? 'ready'
      : advice
        ? advice.title
        : reader.pcsc === 'unavailable'
          ? 'looking for the reader…'
          : reader.pcsc;
  $('reader-advice').hidden = !advice;
  $('reader-advice').textContent = advice?.todo ?? '';
  const action = $('reader-action');
  action.hidden = !advice?.action;
  action.textContent = advice?.action?.label ?? '';
  action.dataset.action = advice?.action?.id ?? '';
}

const UPDATE_TEXT = {
  off: () => 'Updates are off (no feed set).',
  unsupported: (update) => `Updates: ${update.message}.`,
  checking: () => 'Looking for an update…',
  'up-to-date': (update) => `Up to date (checked at ${time(update.checkedAt)}).`,
  downloading: (update) =>
    `Downloading ${update.version}${update.percent === null ? '' : ` (${update.percent}%)`}…`,
  ready: (update) =>
    `Version ${update.version} is ready to install${update.installs ? `: it installs ${update.installs}` : ''}.`,
  installing: (update) => `Installing ${update.version}: the service has stopped…`,
  failed: (update) => `The last update check failed: ${update.message}`,
};

function renderUpdate(update) {
  $('update-state').textContent = UPDATE_TEXT[update.state](update);
  const install = $('install-update');
  install.hidden = update.state !== 'ready';
  install.textContent = update.state === 'ready' ? `Restart to install ${update.version}` : '';
}

function render(snapshot) {
  shown = snapshot;
  const { service, reader, card, lastCard, rateLimits, requests, ledger, simulator } = snapshot;
  // Said at the top whenever the running service uses the simulator: its cards are not real.
  const simulated = simulator !== null && service.state === 'running';
  $('simulator-banner').hidden = !simulated;
  $('simulator-panel').hidden = !simulated;
  if (simulated) renderSimulator(simulator);
  renderBanners(snapshot);
  renderHeadline(snapshot);
  // The state only: why it failed is the banner's (start-up errors used to be squeezed in here).
  badge($('service-state'), service.state, service.state === 'running');
  $('service-url').textContent = service.url ?? '-';
  $('copy-url').disabled = !service.url; // starting or failed: nothing to copy
  $('till-id').textContent = snapshot.tillId ?? 'made at the first start';
  // The name the shop gave this till in the back office, when its heartbeat brought one.
  $('till-name').hidden = !snapshot.tillName;
  $('till-name').textContent = snapshot.tillName ?? '';
  const backOffice = snapshot.console;
  $('back-office').hidden = !backOffice;
  $('back-office-url').textContent = backOffice ? backOffice.url : '';
  $('back-office-setup').hidden = !backOffice || !backOffice.setupUrl;
  const last = requests[0];
  const lastRequest = $('last-request');
  const said = last ? describeRequest(last) : 'none yet';
  if (lastRequest.textContent !== said) {
    lastRequest.textContent = said;
    // A new request: marked for a moment, so an operator testing the POS sees it arrive.
    lastRequest.classList.remove('arrived');
    if (last) requestAnimationFrame(() => lastRequest.classList.add('arrived'));
  }
  renderReader(reader, simulated);
  renderUpdate(snapshot.update);

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
  // The ledger refused to pay this card out and flagged it (CardAccountExceeded), or (the
  // snapshot's words) the card's movement records do not explain it.
  const suspect = $('last-card-suspect');
  suspect.hidden = !lastCard?.suspect;
  suspect.textContent = lastCard?.suspectText
    ? `${lastCard.suspectText.charAt(0).toUpperCase()}${lastCard.suspectText.slice(1)}. ${DO_NOT_PAY}`
    : ACCOUNT_SUSPECT;

  $('ledger-state').textContent =
    ledger.reachable === null ? 'not asked yet' : ledger.reachable ? 'reachable' : 'not reachable';
  $('ledger-state').classList.toggle('warning', ledger.reachable === false);
  $('ledger-waiting').textContent =
    ledger.unconfirmedMovements === 0
      ? 'no movement waiting'
      : `${ledger.unconfirmedMovements} movement(s) waiting for confirmation`;
  $('ledger-waiting').classList.toggle('warning', ledger.unconfirmedMovements > 0);
  // The till float: "offline since 10:42: 7 recharges to report, float 340 of 500 credits left, ..."
  const float = ledger.float;
  $('ledger-float').hidden = float === null || float === undefined || float.state === 'off';
  $('ledger-float').textContent = float ? float.line : '';
  $('ledger-float').classList.toggle(
    'warning',
    Boolean(float) && ['offline', 'stopped', 'held'].includes(float.state),
  );
  // Reserved at the ledger, decided by what the card holds when it is presented again: here
  // (this till's), at the till that made it or by an operator's settle (another till's), or by
  // the provider (one this till lost with no card state to decide it by).
  const forCard = $('ledger-waiting-for-card');
  const groups = WAITING_GROUPS.map(({ owner, say }) => {
    const entries = ledger.waitingForCard.filter((entry) => entry.owner === owner);
    return entries.length === 0 ? null : say(entries.map(waitingEntry).join('; '));
  }).filter((line) => line !== null);
  forCard.hidden = groups.length === 0;
  forCard.replaceChildren(
    ...groups.map((line) => {
      const item = document.createElement('span');
      item.className = 'waiting-group';
      item.textContent = line;
      return item;
    }),
  );
  $('settle-card').hidden = !ledger.waitingForCard.some((entry) => entry.owner === 'other-till');

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

// Movements waiting for their card, by who decides them.

const WAITING_GROUPS = [
  { owner: 'this-till', say: (list) => `Put back card(s) to finish: ${list}.` },
  {
    owner: 'other-till',
    say: (list) =>
      `Waiting at another till: ${list}. Present the card at that till; if it is gone for good, put the card on this reader and press Settle.`,
  },
  {
    owner: 'operator',
    say: (list) =>
      `For the provider: ${list}. No card state to decide it by: the provider decides it at the ledger.`,
  },
];

const waitingEntry = (entry) =>
  `${entry.kind} of ${entry.credits} on card ${entry.cardId} (since ${time(entry.since)}${entry.overdue ? ', overdue' : ''})`;

const movementLine = (entry) =>
  `${entry.kind} of ${entry.credits} from till ${entry.tillId ?? 'unnamed'}`;

/** POST /cards/settle's answer in words: what the card decided, and what it cannot. */
function settledInWords({ cardId, settled, undecided }) {
  if (settled.length === 0 && undecided.length === 0)
    return `Card ${cardId}: no other till's movement is pending on it; nothing was done.`;
  const parts = [];
  if (settled.length > 0)
    parts.push(
      `decided ${settled.map((entry) => `${movementLine(entry)}: ${entry.state}${entry.compensatedBy ? `, which the card disagrees with: set right by ${entry.compensatedBy}` : ''}`).join('; ')}`,
    );
  if (undecided.length > 0)
    parts.push(
      `not decided ${undecided.map((entry) => `${movementLine(entry)} (${entry.reason})`).join('; ')}`,
    );
  return `Card ${cardId}: ${parts.join('. ')}.`;
}

/** A button that runs one card action in main/ and says what came of it, in `resultId`. */
function cardButton(buttonId, resultId, run) {
  $(buttonId).addEventListener('click', async (event) => {
    const button = event.currentTarget;
    button.disabled = true;
    $(resultId).hidden = true;
    try {
      const { ok, text } = await run();
      say(resultId, ok, text);
    } finally {
      button.disabled = false;
    }
  });
}

cardButton('settle-card', 'settle-result', async () => {
  const result = await bridge.settleCard();
  return result.ok
    ? { ok: result.answer.undecided.length === 0, text: settledInWords(result.answer) }
    : { ok: false, text: result.error };
});

// Personalization: the card on the reader gets its own keys (docs/card-security.md).

const personalized = ({ cardId, credits, alreadyPersonalized }) =>
  alreadyPersonalized
    ? `Card ${cardId} was already personalized; nothing was written.`
    : `Card ${cardId} is personalized: it has its own keys now (${credits} credits).`;

cardButton('personalize-card', 'personalize-result', async () => {
  const result = await bridge.personalizeCard();
  return { ok: result.ok, text: result.ok ? personalized(result.answer) : result.error };
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

function showSettings(next) {
  view = next;
  const { settings, plainTextKeyStorage, recovery, locked, masterKeyLocked } = next;
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
  form.updateFeedUrl.value = settings.updateFeedUrl ?? '';
  form.updateInstall.value = settings.updateInstall;
  form.updateIdleMinutes.value = String(settings.updateIdleMinutes);
  form.updateInstallHour.value = String(settings.updateInstallHour);
  // Empty until main keeps the id the service made; a save with it empty keeps that id.
  form.tillId.value = settings.tillId ?? '';
  showMasterKey(settings.cardMasterKeySet);
  if (masterKeyLocked) {
    $('master-key-state').textContent =
      'stored, but cannot be read now: type it again, or clear it';
    form.clearCardMasterKey.disabled = false;
    $('advanced').open = true;
  }
  // A hint of the key (its start and end) to compare with the POS's; Copy API key copies it whole.
  $('api-key-hint').textContent = settings.apiKey
    ? `${settings.apiKey.slice(0, 6)}…${settings.apiKey.slice(-4)}`
    : 'not readable now';
  $('plain-text-warning').hidden = !plainTextKeyStorage;
  // Settings set aside at start: say why, and put the operator on the key to enter again.
  $('settings-recovery').textContent = recovery ?? '';
  $('settings-recovery').hidden = recovery === null;
  if (recovery !== null || locked !== null) form.apiKey.focus();
  if (shown) render(shown);
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
    updateFeedUrl: form.updateFeedUrl.value.trim() || null,
    updateInstall: form.updateInstall.value,
    updateIdleMinutes: Number(form.updateIdleMinutes.value),
    updateInstallHour: Number(form.updateInstallHour.value),
    // Empty: this till's id is kept (an id is replaced, never cleared).
    tillId: form.tillId.value.trim() || null,
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
  showSettings(await bridge.getSettings());
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
// The actions: each says what came of it on its own status line.

async function copyApiKey() {
  const copied = await bridge.copyApiKey();
  say(
    'copy-result',
    copied,
    copied
      ? 'The API key is on the clipboard: paste it into the POS.'
      : 'There is no API key to copy yet.',
  );
}

async function copyServiceUrl() {
  await bridge.copyServiceUrl();
  say('copy-result', true, 'The service URL is on the clipboard.');
}

async function unlockSettings() {
  const result = await bridge.unlockSettings();
  say('unlock-result', result.ok, result.message);
  showSettings(await bridge.getSettings());
}

async function readerAction(action) {
  if (action === 'retry') {
    await bridge.retryReader();
    say('reader-action-result', true, 'Looking for the reader…');
    return;
  }
  say('reader-action-result', true, 'Windows asks for an administrator…');
  const result = await bridge.fixSmartCardService();
  say('reader-action-result', result.ok, result.message);
}

async function openLogFolder() {
  const result = await bridge.openLogFolder();
  say('log-folder-result', result.ok, result.ok ? `Opened ${result.message}` : result.message);
}

function openSettings() {
  document.getElementById('settings-panel').scrollIntoView();
  form.port.focus();
}

$('call-to-action').addEventListener('click', () => void headlineAction?.());
$('copy-url').addEventListener('click', () => void copyServiceUrl());
$('copy-api-key').addEventListener('click', () => void copyApiKey());
$('unlock-settings').addEventListener('click', () => void unlockSettings());
$('startup-error-action').addEventListener('click', openSettings);
$('reader-action').addEventListener('click', (event) => {
  void readerAction(event.currentTarget.dataset.action);
});
$('open-log-folder').addEventListener('click', () => void openLogFolder());
$('open-back-office').addEventListener('click', async () => {
  const result = await bridge.openBackOffice();
  say(
    'copy-result',
    result.ok,
    result.ok ? `Opened ${result.message} in the browser` : result.message,
  );
});
$('install-update').addEventListener('click', () => void bridge.installUpdate());

bridge.onStatus(render);
showSettings(await bridge.getSettings());
render(await bridge.getStatus());
