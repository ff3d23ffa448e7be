// The example POS page: every call of the local API, and live card events. Plain browser
// JavaScript, no build step. See docs/integrators.md.

const $ = (testId) => document.querySelector(`[data-testid="${testId}"]`);
const baseUrl = () => $('base-url').value.replace(/\/+$/, '');
const apiKey = () => $('api-key').value;

/** Shows one call and its answer (status and body), or the failure to reach the service. */
function show(call, status, body, ok) {
  $('result-call').textContent = call;
  const statusElement = $('result-status');
  statusElement.textContent = status;
  statusElement.className = `status ${ok ? 'ok' : 'error'}`;
  $('result-body').textContent = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
}

async function call(method, path, body, idempotencyKey) {
  const headers = { 'X-Api-Key': apiKey() };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
  const label = `${method} ${path}${idempotencyKey ? ` (Idempotency-Key ${idempotencyKey})` : ''}`;
  try {
    const res = await fetch(`${baseUrl()}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // A service running the card simulator says so on every answer.
    if (res.headers.get('Card-Wallet-Simulator') === '1') $('simulator-banner').hidden = false;
    const text = await res.text();
    let answer = text;
    try {
      answer = JSON.parse(text);
    } catch {
      // a plain-text 401
    }
    show(label, `${res.status}${res.ok ? ' OK' : ` ${answer.error ?? answer}`}`, answer, res.ok);
  } catch (error) {
    // The browser refused (CORS: the page's origin is not on the allowlist) or nothing listens.
    show(
      label,
      'not reachable',
      `${error.message}: is the service running, and is ${location.origin} on its allowlist?`,
      false,
    );
  }
}

$('ping').addEventListener('click', () => call('GET', '/ping'));
$('readcard').addEventListener('click', () => call('GET', '/readcard'));
$('info').addEventListener('click', () => call('GET', '/info'));
$('recharge-credits').addEventListener('click', () =>
  call('POST', '/writecard', { credits: Number($('credits').value) }, crypto.randomUUID()),
);
$('recharge-amount').addEventListener('click', () =>
  call('POST', '/writecard', { amount: Number($('amount').value) }, crypto.randomUUID()),
);
$('discharge').addEventListener('click', () =>
  call('POST', '/dischargecard', undefined, crypto.randomUUID()),
);

// The card simulator's control API (docs/integrators.md, "Testing against the card simulator").
$('sim-place').addEventListener('click', () =>
  call('POST', '/simulator/place', { credits: Number($('sim-credits').value) }),
);
$('sim-take-away').addEventListener('click', () => call('POST', '/simulator/take-away', {}));
$('sim-put-back').addEventListener('click', () =>
  call('POST', '/simulator/put-back', { cardId: $('sim-card-id').value.trim() }),
);
$('sim-fault-arm').addEventListener('click', () =>
  call('POST', '/simulator/fault', { fault: $('sim-fault').value }),
);
$('sim-status').addEventListener('click', () => call('GET', '/simulator'));

// Card events: EventSource cannot send X-Api-Key, so the stream is read with fetch.
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

/**
 * Reads GET /events until stopped: parses the text/event-stream (id, event, data fields; a
 * blank line ends an event; comment lines are heartbeats), and reconnects after a drop with
 * Last-Event-ID so no event is missed, waiting longer after each failure.
 */
async function listen(signal) {
  let lastEventId;
  let backoff = 500;
  while (!signal.aborted) {
    try {
      const headers = { 'X-Api-Key': apiKey() };
      if (lastEventId) headers['Last-Event-ID'] = lastEventId;
      const res = await fetch(`${baseUrl()}/events`, { headers, signal });
      if (!res.ok) {
        const answer = await res.json().catch(() => ({}));
        setEventState(`refused: ${res.status} ${answer.error ?? ''}`, false);
        if (res.status === 401 || res.status === 403) return;
      } else {
        setEventState('listening', true);
        backoff = 500;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        let event = { data: '' };
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, end).replace(/\r$/, '');
            buffer = buffer.slice(end + 1);
            if (line === '') {
              if (event.data) {
                if (event.id) lastEventId = event.id;
                const data = JSON.parse(event.data);
                logEvent(`${event.event ?? 'message'} ${describe(event.event, data)}`);
              }
              event = { data: '' };
            } else if (!line.startsWith(':')) {
              const colon = line.indexOf(':');
              const field = colon < 0 ? line : line.slice(0, colon);
              const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
              if (field === 'data') event.data += text;
              else if (field === 'id' || field === 'event') event[field] = text;
            }
          }
        }
      }
    } catch (error) {
      if (signal.aborted) break;
      setEventState(`not reachable: ${error.message}`, false);
    }
    if (signal.aborted) break;
    await new Promise((resolve) => setTimeout(resolve, backoff));
    backoff = Math.min(backoff * 2, 10_000);
  }
  setEventState('not listening', false);
}

function describe(event, data) {
  if (event === 'card') return `${data.type} ${data.cardId}`;
  if (event === 'reader') return `${data.state}${data.reader ? ` (${data.reader})` : ''}`;
  return JSON.stringify(data);
}

$('events-connect').addEventListener('click', () => {
  listening?.abort();
  listening = new AbortController();
  void listen(listening.signal);
});
$('events-disconnect').addEventListener('click', () => listening?.abort());
