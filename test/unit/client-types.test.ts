// The client's types come from docs/openapi.yaml: client/src/api.ts is what the generator
// writes from the document now, and each operation's error codes are a union of its own.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { ErrorCode } from '../../client/src/errors.ts';
import { openApiPath } from '../../service/http/openapi.ts';
import { API_TYPES_FILE, generateApiTypes } from '../../scripts/generate-client-types.ts';

test('when the OpenAPI document is generated into types, then the result is the committed client/src/api.ts (run npm run client:types after changing the document)', async () => {
  const generated = await generateApiTypes(readFileSync(openApiPath(), 'utf8'));
  assert.equal(readFileSync(API_TYPES_FILE, 'utf8'), generated);
});

// Checked by `npm run typecheck`: a code that an operation does not document does not compile.
export const documented: [
  ErrorCode<'readCard'>,
  ErrorCode<'rechargeCard', 400>,
  ErrorCode<'dischargeCard'>,
  ErrorCode<'simulatorPutBack', 404>,
] = ['NoCard', 'Invalid credits or amount value', 'InvalidBody', 'UnknownSimulatedCard'];
// @ts-expect-error NoCredits is not an error of GET /readcard
export const notOfReadCard: ErrorCode<'readCard'> = 'NoCredits';
// @ts-expect-error NoCredits is a 500 of /writecard, not a 400
export const notAt400: ErrorCode<'rechargeCard', 400> = 'NoCredits';
// @ts-expect-error /writecard's bad bodies are the spec's code, never InvalidBody
export const notOfWritecard: ErrorCode<'rechargeCard'> = 'InvalidBody';
