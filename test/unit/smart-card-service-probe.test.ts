import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  parseServiceState,
  parseStartType,
  RetryBackoff,
  scardSvrProblem,
  smartCardServiceProbe,
} from '../../service/card/pcscd-probe.ts';

// `sc.exe query SCardSvr` as Windows prints it in four languages. The labels are translated;
// some versions translate the state's name too. `É` is byte 0x90 in the console's code page
// 850, which the probe reads as latin1.
const E_ACUTE_CP850 = Buffer.from([0x90]).toString('latin1');
const scQuery = {
  english: (state: string) => `
SERVICE_NAME: SCardSvr
        TYPE               : 20  WIN32_SHARE_PROCESS
        STATE              : ${state}
                                (STOPPABLE, NOT_PAUSABLE, IGNORES_SHUTDOWN)
        WIN32_EXIT_CODE    : 0  (0x0)
        SERVICE_EXIT_CODE  : 0  (0x0)
        CHECKPOINT         : 0x0
        WAIT_HINT          : 0x0
`,
  german: (state: string) => `
SERVICE_NAME: SCardSvr
        TYP                : 10  WIN32_OWN_PROCESS
        STATUS             : ${state}
                                (STOPPABLE, NOT_PAUSABLE, IGNORES_SHUTDOWN)
        WIN32_EXITCODE     : 0  (0x0)
        DIENST_EXITCODE    : 0  (0x0)
        CHECKPOINT         : 0x0
        WARTE_HINWEIS      : 0x0
`,
  french: (state: string) => `
NOM_SERVICE: SCardSvr
        TYPE               : 20  WIN32_SHARE_PROCESS
        ${E_ACUTE_CP850}TAT               : ${state}
        CODE_SORTIE_WIN32  : 1077  (0x435)
        CODE_SORTIE_SERVICE: 0  (0x0)
        POINT_DE_CONTR${Buffer.from([0xe2]).toString('latin1')}LE  : 0x0
        INDICATION_ATTENTE : 0x0
`,
  spanish: (state: string) => `
NOMBRE_SERVICIO: SCardSvr
        TIPO               : 20  WIN32_SHARE_PROCESS
        ESTADO             : ${state}
        C${Buffer.from([0xe0]).toString('latin1')}DIGO_DE_SALIDA_DE_WIN32   : 0  (0x0)
        C${Buffer.from([0xe0]).toString('latin1')}DIGO_DE_SALIDA_DEL_SERVICIO: 0  (0x0)
        PUNTO_DE_CONTROL   : 0x0
        SUGERENCIA_DE_ESPERA: 0x0
`,
};
const MISSING = `[SC] EnumQueryServicesStatus:OpenService FEHLER 1060:

Der angegebene Dienst ist kein installierter Dienst.
`;
const regQuery = (start: number) => `
HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\SCardSvr
    Start    REG_DWORD    0x${start.toString(16)}

`;

describe("Windows' smart-card service, read in any language", () => {
  for (const [language, output] of Object.entries(scQuery)) {
    test(`when sc.exe answers in ${language}, then the state number is read (running 4, stopped 1), whatever the labels and the state's name say`, () => {
      assert.equal(parseServiceState(output('4  RUNNING')), 4);
      assert.equal(parseServiceState(output('1  STOPPED')), 1);
      assert.equal(parseServiceState(output('4  EN_EJECUCION')), 4);
      assert.equal(parseServiceState(output('2  START_PENDING')), 2);
    });
  }

  test('when the service does not exist (1060) or the output is not sc.exe, then it says so', () => {
    assert.equal(parseServiceState(MISSING), 'missing');
    assert.equal(parseServiceState('Zugriff verweigert'), null);
    assert.equal(parseServiceState(''), null);
  });

  test("when reg.exe gives SCardSvr's start type, then it is read: 2 automatic, 3 manual, 4 disabled", () => {
    assert.equal(parseStartType(regQuery(2)), 2);
    assert.equal(parseStartType(regQuery(3)), 3);
    assert.equal(parseStartType(regQuery(4)), 4);
    assert.equal(
      parseStartType('FEHLER: Der angegebene Registrierungsschlüssel wurde nicht gefunden.'),
      null,
    );
  });

  /** A Windows that answers sc.exe and reg.exe, recording what was run. */
  function windows(state: string, start: number, language: keyof typeof scQuery = 'german') {
    const ran: string[] = [];
    const run = async (file: string, args: string[]) => {
      ran.push([file, ...args].join(' '));
      if (file === 'sc.exe') return scQuery[language](state);
      if (file === 'reg.exe') return regQuery(start);
      throw new Error(`unexpected ${file}`);
    };
    return { ran, run };
  }

  test('when SCardSvr runs, then there is no problem and only its state was read', async () => {
    const { ran, run } = windows('4  RUNNING', 3);
    assert.equal(await scardSvrProblem(run), null);
    assert.deepEqual(ran, ['sc.exe query SCardSvr']);
  });

  test('when SCardSvr is stopped, then its start type names the problem: on demand, stopped, disabled; nothing is ever changed', async () => {
    for (const [start, code] of [
      [3, 'service-on-demand'],
      [2, 'service-stopped'],
      [4, 'service-disabled'],
    ] as const) {
      for (const language of Object.keys(scQuery) as (keyof typeof scQuery)[]) {
        const { ran, run } = windows('1  STOPPED', start, language);
        const problem = await scardSvrProblem(run);
        assert.equal(problem?.code, code, `${language}, start type ${start}`);
        assert.match(problem?.message ?? '', /SCardSvr/);
        assert.deepEqual(ran, [
          'sc.exe query SCardSvr',
          'reg.exe query HKLM\\SYSTEM\\CurrentControlSet\\Services\\SCardSvr /v Start',
        ]);
      }
    }
  });

  test('when sc.exe cannot run or the service is missing, then that is the problem, not a crash', async () => {
    const failing = await scardSvrProblem(async () => {
      throw new Error('spawn sc.exe ENOENT');
    });
    assert.equal(failing?.code, 'service-stopped');
    assert.match(failing?.message ?? '', /ENOENT/);
    const missing = await scardSvrProblem(async () => MISSING);
    assert.equal(missing?.code, 'service-disabled');
    assert.match(missing?.message ?? '', /not installed/);
  });

  test('when the platform is Windows, then SCardSvr is asked; macOS needs no wait; Linux probes the pcscd socket', async () => {
    const { ran, run } = windows('4  RUNNING', 2, 'french');
    assert.equal(await smartCardServiceProbe('win32', {}, run).check(), null);
    assert.deepEqual(ran, ['sc.exe query SCardSvr']);
    assert.equal(await smartCardServiceProbe('darwin').check(), null);
    const linux = await smartCardServiceProbe('linux', {
      PCSCLITE_CSOCK_NAME: '/nonexistent/pcscd.comm',
    }).check();
    assert.equal(linux?.code, 'service-stopped');
    assert.match(linux?.message ?? '', /pcscd is not running \(no \/nonexistent\/pcscd\.comm\)/);
  });
});

describe('the retry backoff', () => {
  test('when PC/SC stays away, then the waits are 1 s doubling to 30 s, and from 1 s again after a reset', () => {
    const backoff = new RetryBackoff();
    const waits = Array.from({ length: 8 }, () => backoff.next());
    assert.deepEqual(waits, [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    backoff.reset();
    assert.deepEqual([backoff.next(), backoff.next()], [1_000, 2_000]);
  });
});
