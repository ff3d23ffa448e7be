/**
 * The ports browsers and Node's fetch refuse to call (the WHATWG Fetch standard's "bad ports",
 * https://fetch.spec.whatwg.org/#port-blocking): a service on one of them cannot be reached by
 * a POS page, the client library or its own `simulator` command, which all see only "bad
 * port" or a failed fetch. So the service refuses them at start, saying why.
 */
export const FETCH_BLOCKED_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102,
  103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465,
  512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993,
  995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668,
  6669, 6679, 6697, 10080,
]);

/** Why `port` cannot serve browsers and fetch, or undefined. */
export function blockedPortProblem(port: number): string | undefined {
  if (!FETCH_BLOCKED_PORTS.has(port)) return undefined;
  return `port ${port} is one that browsers and fetch refuse to call (the Fetch standard's bad ports): choose another, e.g. the default 4178`;
}
