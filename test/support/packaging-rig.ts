// What the packaging test needs to run electron-builder on a machine that cannot download
// Electron or fpm, and to read what comes out.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The sentinel @electron/fuses looks for in the Electron binary; the fuse wire follows it. */
export const FUSE_SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';

/**
 * Electron's fuses in wire order (@electron/fuses FuseV1Options) with Electron's defaults as
 * shipped: '1' on, '0' off.
 */
export const FUSES = [
  ['RunAsNode', '1'],
  ['EnableCookieEncryption', '0'],
  ['EnableNodeOptionsEnvironmentVariable', '1'],
  ['EnableNodeCliInspectArguments', '1'],
  ['EnableEmbeddedAsarIntegrityValidation', '0'],
  ['OnlyLoadAppFromAsar', '0'],
  ['LoadBrowserProcessSpecificV8Snapshot', '0'],
  ['GrantFileProtocolExtraPrivileges', '1'],
] as const;

/**
 * A stand-in for Electron's unpacked Linux build (electronDist): an `electron` executable that
 * carries the fuse wire where the real binary has it (fuse wire version 1, its length, one byte
 * per fuse), so electron-builder's fuse step flips real bytes, and Electron's LICENSE.
 */
export function standInElectron(folder: string): string {
  mkdirSync(folder, { recursive: true });
  const wire = Buffer.concat([
    Buffer.from(`#!/bin/sh\necho "stand-in for Electron"\n# ${FUSE_SENTINEL}`),
    Buffer.from([1, FUSES.length]),
    Buffer.from(FUSES.map(([, state]) => state).join(''), 'ascii'),
    Buffer.from('\n'),
  ]);
  writeFileSync(join(folder, 'electron'), wire);
  chmodSync(join(folder, 'electron'), 0o755);
  writeFileSync(join(folder, 'LICENSE'), 'Electron is MIT licensed.\n');
  return folder;
}

/** The fuses as set in a built executable: name -> '1' | '0'. */
export function readFuses(executable: string): Record<string, string> {
  const binary = readFileSync(executable);
  const at = binary.indexOf(FUSE_SENTINEL);
  if (at < 0) throw new Error(`no fuse wire in ${executable}`);
  const wire = at + FUSE_SENTINEL.length;
  const length = binary[wire + 1] ?? 0;
  return Object.fromEntries(
    FUSES.slice(0, length).map(([name], i) => [
      name,
      String.fromCharCode(binary[wire + 2 + i] ?? 0),
    ]),
  );
}

/**
 * A stand-in for fpm, which electron-builder runs to make the deb (fpm is a Ruby gem, not in
 * Debian, and electron-builder downloads it from GitHub). It records the arguments
 * electron-builder passes and the desktop entry it hands over, as JSON in $FPM_RECORD; where a
 * real fpm is given in $REAL_FPM it then runs that, so the deb is really built. Without one it
 * writes a placeholder where the deb goes (`real: false` in the record): electron-builder reads
 * the file it asked for, to describe it in latest-linux.yml for electron-updater.
 */
export function standInFpm(file: string): string {
  writeFileSync(
    file,
    `#!/usr/bin/env node
const { readFileSync, writeFileSync } = require('node:fs');
const { spawnSync } = require('node:child_process');
const args = process.argv.slice(2);
const desktop = args.find((arg) => arg.endsWith('.desktop') && arg.includes('='));
writeFileSync(process.env.FPM_RECORD, JSON.stringify({
  args,
  desktopEntry: desktop ? readFileSync(desktop.slice(0, desktop.lastIndexOf('=')), 'utf8') : null,
  real: Boolean(process.env.REAL_FPM),
}));
if (process.env.REAL_FPM) process.exit(spawnSync(process.env.REAL_FPM, args, { stdio: 'inherit' }).status ?? 1);
writeFileSync(args[args.indexOf('--package') + 1], 'a placeholder: fpm is not installed here\\n');
`,
  );
  chmodSync(file, 0o755);
  return file;
}

/** The values that follow each occurrence of `flag` in an argument list. */
export function flagValues(args: string[], flag: string): string[] {
  return args.flatMap((arg, i) =>
    arg === flag && i + 1 < args.length ? [args[i + 1] as string] : [],
  );
}

interface AsarEntry {
  files?: Record<string, AsarEntry>;
  size?: number;
  offset?: string;
  unpacked?: boolean;
}

/**
 * An asar archive as Electron reads it (the format of electron/asar): a 4-byte size of the size
 * pickle, the header pickle's size, then the header pickle (payload size, string length, JSON),
 * then the files. `files` lists every file path ('/'-separated, no leading slash).
 */
export function readAsar(archive: string) {
  const bytes = readFileSync(archive);
  const headerSize = bytes.readUInt32LE(4);
  const jsonSize = bytes.readUInt32LE(12);
  const header = JSON.parse(bytes.subarray(16, 16 + jsonSize).toString('utf8')) as AsarEntry;
  const base = 8 + headerSize;
  const entries = new Map<string, AsarEntry>();
  const walk = (entry: AsarEntry, prefix: string) => {
    for (const [name, child] of Object.entries(entry.files ?? {})) {
      if (child.files) walk(child, `${prefix}${name}/`);
      else entries.set(`${prefix}${name}`, child);
    }
  };
  walk(header, '');
  return {
    files: [...entries.keys()],
    entry: (path: string) => entries.get(path),
    /** A file's text; unpacked files are read from `<archive>.unpacked/`, as Electron does. */
    read(path: string): string {
      const entry = entries.get(path);
      if (entry?.unpacked) return readFileSync(join(`${archive}.unpacked`, path), 'utf8');
      if (!entry || entry.size === undefined) throw new Error(`${path} is not in ${archive}`);
      const start = base + Number(entry.offset);
      return bytes.subarray(start, start + entry.size).toString('utf8');
    },
  };
}
