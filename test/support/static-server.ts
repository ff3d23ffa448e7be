import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildClient } from './client-build.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
};

export interface StaticServer {
  /** The origin the page is served from, e.g. http://127.0.0.2:PORT. */
  origin: string;
  close(): Promise<void>;
}

/**
 * Serves a folder on a loopback address, so a page can be given its own origin (127.0.0.2,
 * 127.0.0.3...: all of 127.0.0.0/8 is loopback on Linux).
 */
export function serveFolder(folder: string, host: string): Promise<StaticServer> {
  return serveFolders({ '/': folder }, host);
}

/**
 * Serves folders at paths (`{ '/docs/example/': folder }`), the longest matching path first, so
 * a page sees the layout it expects without serving everything around it.
 */
export async function serveFolders(
  mounts: Record<string, string>,
  host: string,
): Promise<StaticServer> {
  const paths = Object.keys(mounts).sort((a, b) => b.length - a.length);
  const server = createServer(async (req, res) => {
    const path = normalize(new URL(req.url ?? '/', 'http://x').pathname).replace(
      /^(\.\.[/\\])+/,
      '',
    );
    const mount = paths.find((prefix) => path.startsWith(prefix));
    const rest = mount === undefined ? undefined : path.slice(mount.length);
    try {
      if (mount === undefined || rest === undefined) throw new Error('not served');
      const file = join(mounts[mount] as string, rest === '' ? 'index.html' : rest);
      const body = await readFile(file);
      res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Where the example POS page is, on a server from serveExamplePage. */
export const EXAMPLE_PAGE = '/docs/example/';

/**
 * The example POS page (docs/example) as a checkout serves it after `npm run build`: at
 * /docs/example/, with the client library it imports at /client/dist/ (built now, from the
 * sources).
 */
export async function serveExamplePages(hosts: string[]): Promise<StaticServer[]> {
  const { clientDir } = await buildClient();
  const example = fileURLToPath(new URL('../../docs/example', import.meta.url));
  return Promise.all(
    hosts.map((host) =>
      serveFolders({ [EXAMPLE_PAGE]: example, '/client/dist/': clientDir }, host),
    ),
  );
}
