// Draws every icon of the tray app from one source drawing: a contactless card with a status dot.
// - Tray: a dark glyph with a light outline, legible on light and dark panels; the dot shows the
//   state. main/assets/tray-<state>.png (16 px) and tray-<state>@2x.png (32 px); on Windows
//   tray-<state>.ico (16 to 48 px: 100% to 300% scaling), which Electron's Tray recommends there
//   (docs/api/tray.md): a PNG is scaled, blurry at 125% and 150%.
// - The app (installers, menus, taskbar): the glyph in white on a dark rounded square, the dot
//   green, anti-aliased. main/assets/app-icon/: NxN.png for Linux (16 to 512), icon.ico for
//   Windows (16 to 256), icon.icns for macOS (16 to 1024); electron-builder.yml points there.
// The files are committed. Run: npm run icons
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

/** The app icon at `size` px: 4x4 samples per pixel, so edges are smooth at every size. */
function drawAppIcon(size: number): Buffer {
  const BACKGROUND: Rgba = [33, 38, 48, 255];
  const WHITE: Rgba = [250, 250, 250, 255];
  const DOT = STATES.ready as Rgba;
  const samples = 4;
  const pixels = Buffer.alloc(size * size * 4);
  const inSquare = (x: number, y: number) => {
    // A square with rounded corners (radius 0.18) inside a 0.04 margin.
    const dx = Math.max(Math.abs(x - 0.5) - (0.46 - 0.18), 0);
    const dy = Math.max(Math.abs(y - 0.5) - (0.46 - 0.18), 0);
    return Math.hypot(dx, dy) <= 0.18;
  };
  for (let py = 0; py < size; py += 1) {
    for (let px = 0; px < size; px += 1) {
      const sum = [0, 0, 0, 0];
      for (let sy = 0; sy < samples; sy += 1) {
        for (let sx = 0; sx < samples; sx += 1) {
          const x = (px + (sx + 0.5) / samples) / size;
          const y = (py + (sy + 0.5) / samples) / size;
          if (!inSquare(x, y)) continue;
          // The tray drawing, scaled into the square's inner 76 %.
          const here = source((x - 0.12) / 0.76, (y - 0.12) / 0.76);
          const color = here === 'glyph' ? WHITE : here === 'dot' ? DOT : BACKGROUND;
          for (let c = 0; c < 3; c += 1) sum[c] = (sum[c] ?? 0) + (color[c] ?? 0);
          sum[3] = (sum[3] ?? 0) + 1;
        }
      }
      const covered = sum[3] ?? 0;
      if (covered === 0) continue;
      const at = (py * size + px) * 4;
      for (let c = 0; c < 3; c += 1) pixels[at + c] = Math.round((sum[c] ?? 0) / covered);
      pixels[at + 3] = Math.round((255 * covered) / samples ** 2);
    }
  }
  return png(size, pixels);
}

/** A Windows .ico holding PNG images (Windows Vista and later read PNG entries). */
function ico(images: Map<number, Buffer>): Buffer {
  const header = Buffer.alloc(6);
  header.writeUInt16LE(1, 2); // type 1: icon
  header.writeUInt16LE(images.size, 4);
  const entries: Buffer[] = [];
  let offset = 6 + 16 * images.size;
  for (const [size, data] of images) {
    const entry = Buffer.alloc(16);
    entry[0] = size >= 256 ? 0 : size; // 0 means 256
    entry[1] = size >= 256 ? 0 : size;
    entry.writeUInt16LE(1, 4); // colour planes
    entry.writeUInt16LE(32, 6); // bits per pixel
    entry.writeUInt32LE(data.length, 8);
    entry.writeUInt32LE(offset, 12);
    entries.push(entry);
    offset += data.length;
  }
  return Buffer.concat([header, ...entries, ...images.values()]);
}

/** A macOS .icns holding PNG images, each under its OSType (icp4 = 16 px ... ic10 = 1024 px). */
function icns(images: Map<number, Buffer>): Buffer {
  const TYPES: Record<number, string> = {
    16: 'icp4',
    32: 'icp5',
    64: 'icp6',
    128: 'ic07',
    256: 'ic08',
    512: 'ic09',
    1024: 'ic10',
  };
  const chunks = [...images].map(([size, data]) => {
    const head = Buffer.alloc(8);
    head.write(TYPES[size] ?? '', 0, 'ascii');
    head.writeUInt32BE(8 + data.length, 4);
    return Buffer.concat([head, data]);
  });
  const head = Buffer.alloc(8);
  head.write('icns', 0, 'ascii');
  head.writeUInt32BE(8 + chunks.reduce((total, chunk) => total + chunk.length, 0), 4);
  return Buffer.concat([head, ...chunks]);
}

/** The tray icon's sizes at 100%, 125%, 150%, 200%, 250% and 300% scaling. */
const TRAY_ICO_SIZES = [16, 20, 24, 32, 40, 48];
const out = fileURLToPath(new URL('../main/assets/', import.meta.url));
mkdirSync(out, { recursive: true });
for (const [state, color] of Object.entries(STATES)) {
  writeFileSync(`${out}tray-${state}.png`, draw(16, color));
  writeFileSync(`${out}tray-${state}@2x.png`, draw(32, color));
  writeFileSync(
    `${out}tray-${state}.ico`,
    ico(new Map(TRAY_ICO_SIZES.map((size) => [size, draw(size, color)]))),
  );
}
const appIcon = new Map(
  [16, 24, 32, 48, 64, 128, 256, 512, 1024].map((size) => [size, drawAppIcon(size)]),
);
const pick = (sizes: number[]) => new Map(sizes.map((size) => [size, appIcon.get(size) as Buffer]));
mkdirSync(`${out}app-icon`, { recursive: true });
for (const [size, image] of pick([16, 32, 48, 64, 128, 256, 512]))
  writeFileSync(`${out}app-icon/${size}x${size}.png`, image);
writeFileSync(`${out}app-icon/icon.ico`, ico(pick([16, 24, 32, 48, 64, 128, 256])));
writeFileSync(`${out}app-icon/icon.icns`, icns(pick([16, 32, 64, 128, 256, 512, 1024])));
console.log(`wrote ${Object.keys(STATES).length * 3} tray icons and the app icons to ${out}`);
