/**
 * Times and intervals as the real ledger's SQL puts them into a refusal's `detail`, so the
 * simulated ledger's details read the same (the contract tests compare them, and a card seed's
 * trace shows them): `format('%s', ...)` of a timestamptz or an interval, and `to_char`.
 */

const DAY_US = 86_400_000_000n;

/** `%s` of a timestamptz (DateStyle ISO, TimeZone UTC): `2026-11-26 09:00:30.5+00`. */
export function pgTimestamptz(iso: string): string {
  const at = new Date(iso);
  const [date, time = ''] = at.toISOString().split('T');
  const [seconds = '', millis = '000'] = time.replace('Z', '').split('.');
  const fraction = millis.replace(/0+$/, '');
  return `${date} ${seconds}${fraction === '' ? '' : `.${fraction}`}+00`;
}

/**
 * `%s` of the interval one timestamptz minus another gives (IntervalStyle postgres, hours
 * justified into days): `00:03:20`, `-00:05:00.25`, `1 day 02:00:00`, `-2 days -00:00:01`.
 */
export function pgInterval(milliseconds: number): string {
  const total = BigInt(Math.round(milliseconds)) * 1000n;
  const days = total / DAY_US;
  const rest = total - days * DAY_US;
  const parts: string[] = [];
  if (days !== 0n) parts.push(`${days} day${days === 1n ? '' : 's'}`);
  if (rest !== 0n || days === 0n) {
    const size = rest < 0n ? -rest : rest;
    const seconds = size / 1_000_000n;
    const micros = size % 1_000_000n;
    const two = (n: bigint) => n.toString().padStart(2, '0');
    const fraction = micros.toString().padStart(6, '0').replace(/0+$/, '');
    parts.push(
      `${rest < 0n ? '-' : ''}${two(seconds / 3600n)}:${two((seconds / 60n) % 60n)}:${two(seconds % 60n)}` +
        (fraction === '' ? '' : `.${fraction}`),
    );
  }
  return parts.join(' ');
}

/** `to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`: to the second, cut. */
export function pgSecondsUtc(iso: string): string {
  return `${new Date(iso).toISOString().slice(0, 19)}Z`;
}
