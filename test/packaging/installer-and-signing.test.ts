import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { signingPlan, targetOf } from '../../scripts/dist.ts';

// The Windows installer's include script (build/installer.nsh), compiled by NSIS the way
// electron-builder includes it, and the signing gate of `npm run dist:signed` (scripts/dist.ts).

const root = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'cww-installer-'));
after(() => rmSync(work, { recursive: true, force: true }));

const makensis = spawnSync('sh', ['-c', 'command -v makensis'], { encoding: 'utf8' }).stdout.trim();

describe("the Windows installer's include script (build/installer.nsh)", () => {
  const script = readFileSync(join(root, 'build', 'installer.nsh'), 'utf8');

  test('when read, then it changes no Windows service (it would run again on every update) and names the test that checks it', () => {
    const code = script
      .split('\n')
      .filter((line) => !line.trim().startsWith(';'))
      .join('\n');
    assert.doesNotMatch(code, /sc\.exe|SCardSvr|customInstall\b/);
    assert.match(script, /test\/packaging\/installer-and-signing\.test\.ts/);
    const named = [...script.matchAll(/test\/[\w/-]+\.test\.ts/g)].map((match) => match[0]);
    assert.deepEqual(
      named.filter((file) => !existsSync(join(root, file))),
      [],
      'every test it names exists',
    );
  });

  test('when a copy for all users exists, then it says so on a manual install, never on an update', () => {
    const macro = script.slice(script.indexOf('!macro customInit'), script.indexOf('!macroend'));
    assert.match(macro, /ReadRegStr \$0 HKLM "\$\{INSTALL_REGISTRY_KEY\}" InstallLocation/);
    assert.match(macro, /\$\{AndIfNot\} \$\{isUpdated\}/);
    assert.match(macro, /MessageBox .* \/SD IDOK/);
  });

  test('when compiled by NSIS as electron-builder includes it (its registry key, isUpdated, customInit in .onInit), then it builds', (context) => {
    if (!makensis) {
      context.diagnostic(
        'makensis is not installed here (apt install nsis); the script was only read',
      );
      return;
    }
    const wrapper = join(work, 'check.nsi');
    writeFileSync(
      wrapper,
      [
        'Unicode true',
        `OutFile "${join(work, 'check.exe')}"`,
        'RequestExecutionLevel user',
        // What electron-builder's templates define before .onInit inserts customInit.
        '!define INSTALL_REGISTRY_KEY "Software\\card-wallet-worker-test"',
        '!macro _isUpdated _a _b _t _f',
        '  StrCmp "" "updated" `${_t}` `${_f}`',
        '!macroend',
        '!define isUpdated `"" isUpdated ""`',
        `!include "${join(root, 'build', 'installer.nsh')}"`,
        'Function .onInit',
        '  !insertmacro customInit',
        'FunctionEnd',
        'Section',
        'SectionEnd',
        '',
      ].join('\n'),
    );
    const result = spawnSync(makensis, ['-V2', '-WX', wrapper], { encoding: 'utf8' });
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
  });
});

describe('signed builds (npm run dist:signed)', () => {
  test('when Windows signing is asked without a certificate, then it names what is missing', () => {
    assert.deepEqual(signingPlan('win', {}).missing, [
      ['WIN_CSC_LINK', 'CSC_LINK'],
      ['WIN_CSC_KEY_PASSWORD', 'CSC_KEY_PASSWORD'],
    ]);
    const ready = signingPlan('win', { CSC_LINK: '/keys/shop.pfx', CSC_KEY_PASSWORD: 'x' });
    assert.deepEqual(ready.missing, []);
    assert.deepEqual(ready.options, ['-c.forceCodeSigning=true']);
  });

  test('when a macOS build is signed, then it also needs notary credentials, and is notarized', () => {
    const signedOnly = signingPlan('mac', { CSC_LINK: 'cert.p12', CSC_KEY_PASSWORD: 'x' });
    assert.equal(signedOnly.missing.length, 1);
    assert.match(
      signedOnly.missing[0]?.join(' or ') ?? '',
      /APPLE_API_KEY \+ APPLE_API_KEY_ID \+ APPLE_API_ISSUER/,
    );
    const ready = signingPlan('mac', {
      CSC_NAME: 'Developer ID Application: Shop Software (TEAM123456)',
      APPLE_ID: 'dev@example.com',
      APPLE_APP_SPECIFIC_PASSWORD: 'abcd-efgh-ijkl-mnop',
      APPLE_TEAM_ID: 'TEAM123456',
    });
    assert.deepEqual(ready.missing, []);
    assert.deepEqual(ready.options, ['-c.forceCodeSigning=true', '-c.mac.notarize=true']);
  });

  test("when electron-builder's platform flags are given, then the check is for that platform", () => {
    assert.equal(targetOf(['--win'], 'linux'), 'win');
    assert.equal(targetOf(['-m'], 'linux'), 'mac');
    assert.equal(targetOf([], 'win32'), 'win');
    assert.equal(targetOf([], 'linux'), 'linux');
  });

  test('when a signed Windows build is started without the certificate, then it fails loudly and builds nothing', () => {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^(WIN_)?CSC_|^APPLE_/.test(name)),
    );
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(root, 'scripts', 'dist.ts'), '--sign', '--win'],
      {
        cwd: root,
        encoding: 'utf8',
        env,
      },
    );
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stderr, /a signed win build was asked for, but these are not set:/);
    assert.match(result.stderr, /WIN_CSC_LINK or CSC_LINK/);
    assert.match(result.stderr, /Nothing was built/);
  });
});
