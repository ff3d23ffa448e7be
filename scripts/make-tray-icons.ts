// Draws the four tray icons from one source drawing: a contactless card with a status dot.
// A dark glyph with a light outline stays legible on light and dark panels. Writes
// main/assets/tray-<state>.png (16 px) and tray-<state>@2x.png (32 px); the PNGs are committed.
// Run: node --import tsx scripts/make-tray-icons.ts
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

type Rgba = [number, number, number, number];

const STATES: Record<string, Rgba> = {
  'no-reader': [140, 146, 158, 255],
  ready: [46, 160, 87, 255],
  'card-present': [47, 91, 211, 255],
  error: [214, 52, 44, 255],
};
const GLYPH: Rgba = [33, 38, 48, 255];
const OUTLINE: Rgba = [250, 250, 250, 255];

/** Coverage of the source drawing at (x, y) in a 0..1 square: 'glyph', 'dot' or nothing. */
function source(x: number, y: number): 'glyph' | 'dot' | undefined {
  const dot = Math.hypot(x - 0.78, y - 0.78) < 0.2;
  if (dot) return 'dot';
  const card =
    x > 0.06 && x < 0.86 && y > 0.2 && y < 0.72 && !(x > 0.12 && x < 0.8 && y > 0.27 && y < 0.65);
  // Two contactless waves inside the card.
  const r = Math.hypot(x - 0.3, y - 0.46);
  const waves =
    x > 0.3 && ((r > 0.1 && r < 0.15) || (r > 0.2 && r < 0.25)) && Math.abs(y - 0.46) < r * 0.8;
  return card || waves ? 'glyph' : undefined;
}

function draw(size: number, status: Rgba): Buffer {
  const pixels = Buffer.alloc(size * size * 4);
  const at = (px: number, py: number) => source((px + 0.5) / size, (py + 0.5) / size);
  for (let py = 0; py < size; py += 1) {
    for (let px = 0; px < size; px += 1) {
      const here = at(px, py);
      let color: Rgba | undefined = here === 'glyph' ? GLYPH : here === 'dot' ? status : undefined;
      if (!color) {
        // Outline: any neighbour drawn.
        const near = [-1, 0, 1].some((dx) =>
          [-1, 0, 1].some((dy) => at(px + dx, py + dy) !== undefined),
        );
        if (near) color = OUTLINE;
      }
      if (color) pixels.set(color, (py * size + px) * 4);
    }
  }
  return png(size, pixels);
}

function png(size: number, rgba: Buffer): Buffer {
  const rows = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y += 1)
    rgba.copy(rows, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k += 1) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

const out = fileURLToPath(new URL('../main/assets/', import.meta.url));
mkdirSync(out, { recursive: true });
for (const [state, color] of Object.entries(STATES)) {
  writeFileSync(`${out}tray-${state}.png`, draw(16, color));
  writeFileSync(`${out}tray-${state}@2x.png`, draw(32, color));
}
console.log(`wrote ${Object.keys(STATES).length * 2} tray icons to ${out}`);
