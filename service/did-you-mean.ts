/**
 * The known name closest to a mistyped one, when it is close enough to be what was meant
 * (a letter or two off, or another case); for "did you mean" in errors and the CLI.
 */
export function closest(given: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(given.toLowerCase(), name.toLowerCase());
    if (!best || distance < best.distance) best = { name, distance };
  }
  if (!best) return undefined;
  const allowed = Math.max(1, Math.min(2, Math.floor(best.name.length / 4)));
  return best.distance <= allowed ? best.name : undefined;
}

/** `; did you mean X?` for a message, or nothing. */
export function didYouMean(given: string, known: readonly string[], quote = (s: string) => s) {
  const near = closest(given, known);
  return near === undefined ? '' : `; did you mean ${quote(near)}?`;
}

/** Levenshtein distance (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(
        Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution),
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}
