import { json, type RequestHandler } from 'express';
import { errors } from '../errors.ts';

/** Bounds of a request body; ours are a few fields, so anything larger or deeper is hostile. */
export const BODY_LIMITS = { bytes: 4 * 1024, depth: 4 } as const;

const POISON_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Parses a JSON body when there is one. A body must be `application/json` (a cross-site
 * "simple" POST with text/plain or a form cannot pass), at most 4 kB, valid UTF-8, nested at
 * most 4 deep, without prototype-poisoning keys and without duplicate keys. A request with no
 * body passes with `req.body` undefined.
 */
export function jsonBody(): RequestHandler[] {
  const parse = json({
    limit: BODY_LIMITS.bytes,
    strict: false,
    type: () => true,
    verify: (_req, _res, buffer) => {
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(buffer);
      } catch {
        throw errors.invalidJson('the body is not valid UTF-8');
      }
      const text = buffer.toString('utf8');
      // An empty body (Content-Length: 0) is no body: body-parser answers it as {}.
      if (text === '') return;
      // The grammar first: the shape walk below parses keys on its own and relies on valid
      // JSON, and an error thrown here that is not ours would be answered as a 500.
      try {
        JSON.parse(text);
      } catch (error) {
        throw errors.invalidJson(`the body is not valid JSON: ${(error as Error).message}`);
      }
      checkShape(text);
    },
  });
  const requireJson: RequestHandler = (req, _res, next) => {
    const length = Number(req.headers['content-length'] ?? 0);
    const hasBody = length > 0 || req.headers['transfer-encoding'] !== undefined;
    if (!hasBody) {
      next();
      return;
    }
    if (!req.is('application/json')) {
      const type = req.headers['content-type'];
      next(
        errors.unsupportedMediaType(
          `the body must be application/json (got ${type === undefined ? 'no Content-Type' : type})`,
        ),
      );
      return;
    }
    next();
  };
  return [requireJson, parse];
}

/**
 * Walks valid JSON text once for what JSON.parse accepts but we refuse: duplicate keys (which
 * one wins differs between parsers), poisoning keys, and depth. Strings are skipped whole, so
 * brackets and commas inside them do not count.
 */
function checkShape(text: string): void {
  const open: { object: boolean; keys: Set<string>; expectKey: boolean }[] = [];
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    const top = open[open.length - 1];
    if (ch === '{' || ch === '[') {
      if (open.length >= BODY_LIMITS.depth) {
        throw errors.invalidJson(`the body is nested deeper than ${BODY_LIMITS.depth} levels`);
      }
      open.push({ object: ch === '{', keys: new Set(), expectKey: ch === '{' });
    } else if (ch === '}' || ch === ']') {
      open.pop();
    } else if (ch === ',' && top) {
      top.expectKey = top.object;
    } else if (ch === '"') {
      const end = endOfString(text, i);
      if (top?.expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (POISON_KEYS.has(key)) {
          throw errors.invalidJson(`the key ${JSON.stringify(key)} is not allowed`);
        }
        if (top.keys.has(key)) {
          throw errors.invalidJson(`the key ${JSON.stringify(key)} appears twice`);
        }
        top.keys.add(key);
        top.expectKey = false;
      }
      i = end;
    }
  }
}

function endOfString(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i;
}
