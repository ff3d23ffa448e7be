/**
 * The JSON Canonicalization Scheme (RFC 8785, JCS): one byte sequence per JSON value, so that a
 * signature over it can be checked by anyone who canonicalizes the same value. Object members
 * are sorted by their names' UTF-16 code units, nothing but the JSON itself is written (no
 * whitespace), strings are escaped as ECMAScript's JSON.stringify escapes them, and numbers
 * are written as ECMAScript writes them (which is what RFC 8785 prescribes). Values that are
 * not I-JSON are refused: a string with a lone surrogate, a number that is not finite, and
 * anything that is not JSON (undefined, a function, a bigint, a symbol).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`not I-JSON: the number ${value}`);
    return JSON.stringify(value);
  }
  if (typeof value === 'string') return canonicalString(value);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const members = Object.keys(value)
      .sort()
      .map(
        (name) =>
          `${canonicalString(name)}:${canonicalJson((value as Record<string, unknown>)[name])}`,
      );
    return `{${members.join(',')}}`;
  }
  throw new TypeError(`not JSON: ${typeof value}`);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function canonicalString(text: string): string {
  if (LONE_SURROGATE.test(text)) throw new TypeError('not I-JSON: a string with a lone surrogate');
  return JSON.stringify(text);
}
