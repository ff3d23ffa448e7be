/**
 * A new PGlite database, made once at build time: PGlite's initdb runs PostgreSQL's bootstrap
 * in WebAssembly, which took 8 s and about 900 MB at peak on the first start of a till, in a
 * second WebAssembly instance beside the one that then serves. The build runs initdb and the
 * migrations once and keeps the folder as a gzipped tar beside this module; a new folder is
 * then a copy of it (well under a second), and PGlite opens it as an existing database. What the
 * folder holds is what initdb and the migrations would write there (the migrations newer than
 * the template still run at open). The template is used only by the PGlite version that made
 * it; any other, or a source tree without one, runs initdb as before.
 *
 * The archive is plain ustar (folders and regular files), written and read here in a few lines
 * rather than with a dependency.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gunzip, gzipSync } from 'node:zlib';
import { routinesChecksum } from './migrate.ts';
import { migrations } from './migrations/index.ts';

const here = dirname(fileURLToPath(import.meta.url));
/**
 * The template beside the built module (dist/cloud/db/), made by `npm run build`; from the
 * source tree (cloud/db/, run through tsx as the tests do), the built one, if any.
 */
export const TEMPLATE_FILE =
  [
    join(here, 'pglite-template.tar.gz'),
    join(here, '..', '..', 'dist', 'cloud', 'db', 'pglite-template.tar.gz'),
  ].find((file) => existsSync(file)) ?? join(here, 'pglite-template.tar.gz');
const BLOCK = 512;

/** Beside each template, what made it (pglite-template.json). */
const stampOf = (file: string) => file.replace(/\.tar\.gz$/, '.json');

/** What a template is good for: this PGlite and these migrations and routines. */
export function templateStamp(): { pglite: string; migrations: string } {
  // Its package.json is not among its exports: found from its entry point (dist/index.cjs).
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const packageJson = join(dirname(entry), '..', 'package.json');
  const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string };
  // Each migration's number with its SQL: a template of the same SQL under other numbers would
  // be a schema the ledger refuses ("newer than this ledger").
  const schema = createHash('sha256')
    .update(migrations.map(({ version, sql }) => `${version}\n${sql}`).join('\n'))
    .update(routinesChecksum())
    .digest('hex')
    .slice(0, 16);
  return { pglite: version, migrations: schema };
}

function readStamp(file: string): { pglite?: string; migrations?: string } | undefined {
  try {
    return JSON.parse(readFileSync(stampOf(file), 'utf8')) as { pglite?: string };
  } catch {
    return undefined;
  }
}

/** True when the template was made by this PGlite with these migrations. */
export function templateIsCurrent(file = TEMPLATE_FILE): boolean {
  const stamp = readStamp(file);
  const current = templateStamp();
  return (
    existsSync(file) && stamp?.pglite === current.pglite && stamp.migrations === current.migrations
  );
}

const gunzipAsync = promisify(gunzip);

/**
 * Fills the empty folder `dataDir` from the template, folders 0700 and files 0600; false (and
 * nothing written) when there is no template for this PGlite. Asynchronous (zlib's thread pool,
 * file writes): a worker listens while its embedded ledger's first start copies 40 MB.
 */
export async function copyTemplate(dataDir: string, file = TEMPLATE_FILE): Promise<boolean> {
  if (!existsSync(file) || readStamp(file)?.pglite !== templateStamp().pglite) return false;
  // Large output chunks: the default 16 kB ones cost as much again in copies (40 MB out).
  const archive = await gunzipAsync(await readFile(file), { chunkSize: 8 * 1024 * 1024 });
  for (let offset = 0; offset + BLOCK <= archive.length;) {
    const header = archive.subarray(offset, offset + BLOCK);
    const name = field(header, 0, 100);
    if (name === '') break; // the two empty blocks that end an archive
    const prefix = field(header, 345, 155);
    const path = prefix ? `${prefix}/${name}` : name;
    const size = Number.parseInt(field(header, 124, 12) || '0', 8);
    const type = String.fromCharCode(header[156] ?? 0);
    const target = join(dataDir, path);
    if (relative(dataDir, target).startsWith('..')) throw new Error(`template entry ${path}`);
    offset += BLOCK;
    if (type === '5') {
      await mkdir(target, { recursive: true, mode: 0o700 });
    } else if (type === '0' || type === '\0') {
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      await writeFile(target, archive.subarray(offset, offset + size), { mode: 0o600 });
      offset += Math.ceil(size / BLOCK) * BLOCK;
    } else {
      throw new Error(`template entry ${path} of type ${type}`);
    }
  }
  return true;
}

/** Writes `folder` (a closed PGlite database) as the template, with its stamp. */
export function writeTemplate(folder: string, file = TEMPLATE_FILE): void {
  const blocks: Buffer[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const child = join(path, entry.name);
      const name = relative(folder, child).split(sep).join('/');
      if (entry.isDirectory()) {
        blocks.push(header(name, 0, '5'));
        walk(child);
      } else if (entry.isFile()) {
        const content = readFileSync(child);
        blocks.push(header(name, content.length, '0'), content);
        const padding = (BLOCK - (content.length % BLOCK)) % BLOCK;
        blocks.push(Buffer.alloc(padding));
      }
    }
  };
  walk(folder);
  blocks.push(Buffer.alloc(2 * BLOCK));
  writeFileSync(file, gzipSync(Buffer.concat(blocks), { level: 9 }));
  writeFileSync(stampOf(file), `${JSON.stringify(templateStamp())}\n`);
}

/** A ustar header: the name (under 100 characters here), size, type; the rest fixed. */
function header(name: string, size: number, type: '0' | '5'): Buffer {
  if (Buffer.byteLength(name) >= 100) throw new Error(`template path too long: ${name}`);
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0);
  block.write(type === '5' ? '0000700\0' : '0000600\0', 100);
  block.write('0000000\0', 108);
  block.write('0000000\0', 116);
  block.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  block.write('00000000000\0', 136);
  block.write(type, 156);
  block.write('ustar\0' + '00', 257);
  block.write('        ', 148); // the checksum counts its own field as spaces
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return block;
}

function field(block: Buffer, start: number, length: number): string {
  const raw = block.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw
    .subarray(0, end === -1 ? length : end)
    .toString('utf8')
    .trim();
}
