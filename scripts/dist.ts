#!/usr/bin/env node
// Builds the installers for this OS with electron-builder (after `npm run build`):
//   npm run dist           unsigned (Windows SmartScreen and macOS Gatekeeper warn; fine to try)
//   npm run dist:signed    signed, and on macOS notarized: the credentials must be in the
//                          environment, or this fails before building, naming what is missing
// Extra arguments go to electron-builder (e.g. `npm run dist:signed -- --win`).
// See docs/operators.md, "Building signed installers".
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

type Env = Record<string, string | undefined>;
export type Target = 'win' | 'mac' | 'linux';

const has = (env: Env, name: string) => (env[name] ?? '').trim() !== '';
const anyOf = (env: Env, names: string[]) => names.some((name) => has(env, name));

/**
 * What a build for `target` ('win' | 'mac' | 'linux') needs when signing is asked for: the
 * missing environment variables (each entry is a list of alternatives), and the options that
 * make electron-builder fail instead of shipping an unsigned app.
 */
export function signingPlan(target: Target, env: Env): { missing: string[][]; options: string[] } {
  const missing: string[][] = [];
  if (target === 'win') {
    // electron-builder signs Windows builds with a .pfx/.p12 given as a path, URL or base64.
    if (!anyOf(env, ['WIN_CSC_LINK', 'CSC_LINK'])) missing.push(['WIN_CSC_LINK', 'CSC_LINK']);
    if (!anyOf(env, ['WIN_CSC_KEY_PASSWORD', 'CSC_KEY_PASSWORD']))
      missing.push(['WIN_CSC_KEY_PASSWORD', 'CSC_KEY_PASSWORD']);
    return { missing, options: ['-c.forceCodeSigning=true'] };
  }
  if (target === 'mac') {
    // A Developer ID Application certificate: exported (CSC_LINK + password) or in the
    // keychain (CSC_NAME); then Apple's notary service, with one of its three credentials.
    if (!has(env, 'CSC_NAME')) {
      if (!has(env, 'CSC_LINK')) missing.push(['CSC_LINK', 'CSC_NAME']);
      if (!has(env, 'CSC_KEY_PASSWORD')) missing.push(['CSC_KEY_PASSWORD']);
    }
    const notary = [
      ['APPLE_API_KEY', 'APPLE_API_KEY_ID', 'APPLE_API_ISSUER'],
      ['APPLE_ID', 'APPLE_APP_SPECIFIC_PASSWORD', 'APPLE_TEAM_ID'],
      ['APPLE_KEYCHAIN', 'APPLE_KEYCHAIN_PROFILE'],
    ];
    if (!notary.some((set) => set.every((name) => has(env, name))))
      missing.push(notary.map((set) => set.join(' + ')));
    return { missing, options: ['-c.forceCodeSigning=true', '-c.mac.notarize=true'] };
  }
  // The AppImage and the deb are not signed by electron-builder.
  return { missing, options: [] };
}

/** The target electron-builder builds for: its --win/--mac/--linux flag, else this OS. */
export function targetOf(args: string[], platform: NodeJS.Platform): Target {
  if (args.some((arg) => /^(-w|--win(dows)?)$/.test(arg))) return 'win';
  if (args.some((arg) => /^(-m|--mac(os)?)$/.test(arg))) return 'mac';
  if (args.some((arg) => /^(-l|--linux)$/.test(arg))) return 'linux';
  return platform === 'win32' ? 'win' : platform === 'darwin' ? 'mac' : 'linux';
}

function main() {
  const args = process.argv.slice(2);
  const sign = args.includes('--sign');
  const builderArgs = args.filter((arg) => arg !== '--sign');
  const target = targetOf(builderArgs, process.platform);
  let options: string[] = [];
  if (sign) {
    const plan = signingPlan(target, process.env);
    if (plan.missing.length > 0) {
      console.error(
        [
          `dist: a signed ${target} build was asked for, but these are not set:`,
          ...plan.missing.map((names) => `  - ${names.join(' or ')}`),
          'Nothing was built. See docs/operators.md, "Building signed installers".',
        ].join('\n'),
      );
      process.exit(1);
    }
    if (target === 'linux') console.error('dist: the AppImage and the deb are not signed.');
    options = plan.options;
  } else if (target !== 'linux') {
    console.error(
      `dist: an unsigned ${target} build (${target === 'win' ? 'SmartScreen' : 'Gatekeeper'} warns on install); npm run dist:signed signs it.`,
    );
  }
  const builder = createRequire(import.meta.url).resolve('electron-builder/cli.js');
  const result = spawnSync(process.execPath, [builder, ...builderArgs, ...options], {
    stdio: 'inherit',
  });
  process.exit(result.status ?? 1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
