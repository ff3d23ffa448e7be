import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

// Each rule of the part map, linted on a one-line fixture placed (virtually) in the folder it
// governs: the forbidden import is reported, its allowed neighbour is not.
const root = fileURLToPath(new URL('../../', import.meta.url));
const eslint = new ESLint({ cwd: root });

async function partMapErrors(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${source}\nexport {};\n`, { filePath: file });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === 'part-map/allowed-imports')
    .map((message) => message.message);
}

const cases: { file: string; forbidden: string; allowed: string }[] = [
  {
    file: 'common/fixture.ts',
    forbidden: "import { errors } from '../service/errors.ts';",
    allowed: "import { parseDecimal } from './decimal.ts';",
  },
  {
    file: 'common/fixture.ts',
    forbidden: "import { ledgerErrors } from '../cloud/errors.ts';",
    allowed: "import type { Movement } from './ledger-contract.ts';",
  },
  {
    file: 'cloud/fixture.ts',
    forbidden: "import { listen } from '../service/worker-service.ts';",
    allowed: "import { listen } from '../common/listen.ts';",
  },
  {
    file: 'cloud/http/fixture.ts',
    forbidden: "import electron from 'electron';",
    allowed: "import fastify from 'fastify';",
  },
  {
    file: 'service/fixture.ts',
    forbidden: "import { Ledger } from '../cloud/ledger.ts';",
    allowed: "import { LedgerClient } from './cloud/ledger-client.ts';",
  },
  {
    file: 'service/wallet/fixture.ts',
    forbidden: "import { parseDecimal } from '../../cloud/records.ts';",
    allowed: "import { parseDecimal } from '../../common/decimal.ts';",
  },
  {
    file: 'service/http/fixture.ts',
    forbidden: "const { app } = await import('electron');",
    allowed: "import express from 'express';",
  },
  {
    file: 'service/card/fixture.ts',
    forbidden: "import { MovementEngine } from '../wallet/movement-engine.ts';",
    allowed: "import { errors } from '../errors.ts';",
  },
  {
    file: 'service/card/fixture.ts',
    forbidden: "import { errorHandler } from '../http/error-handler.ts';",
    allowed: "import { OperationQueue } from './operation-queue.ts';",
  },
  {
    file: 'service/wallet/fixture.ts',
    forbidden: "import { createApp } from '../http/create-app.ts';",
    allowed: "import { CardSession } from '../card/card-session.ts';",
  },
  {
    file: 'service/cloud/fixture.ts',
    forbidden: "export { readCard } from '../wallet/read-card.ts';",
    allowed: "export { errors } from '../errors.ts';",
  },
  {
    file: 'renderer/fixture.js',
    forbidden: "import { statusModel } from '../main/status-model.ts';",
    allowed: "import { format } from './format.js';",
  },
  {
    file: 'renderer/fixture.js',
    forbidden: "import { errors } from '../service/errors.ts';",
    allowed: "import { view } from './view.js';",
  },
  {
    file: 'main/fixture.ts',
    forbidden: "import { startLedgerServer } from '../cloud/create-ledger-server.ts';",
    allowed: "import { startWorkerService } from '../service/worker-service.ts';",
  },
];

describe('the part map in eslint.config.js', () => {
  for (const { file, forbidden, allowed } of cases) {
    test(`when ${file} has \`${forbidden}\`, then lint refuses it, and allows \`${allowed}\``, async () => {
      const refused = await partMapErrors(file, forbidden);
      assert.equal(
        refused.length,
        1,
        `expected one part-map error, got ${JSON.stringify(refused)}`,
      );
      assert.deepEqual(await partMapErrors(file, allowed), []);
    });
  }

  test('when the embedded ledger starts the ledger in standalone mode, then that one import is allowed', async () => {
    const source =
      "const { startLedgerServer } = await import('../../cloud/create-ledger-server.ts');";
    assert.deepEqual(await partMapErrors('service/cloud/embedded-ledger.ts', source), []);
    assert.equal((await partMapErrors('service/cloud/ledger-client.ts', source)).length, 1);
  });
});
