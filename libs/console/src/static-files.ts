import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** The page a browser gets when the front-end was not built: what to run, not a blank 404. */
export function notBuiltPage(webRoot: string): string {
  return [
    '<!doctype html><html><head><meta charset="utf-8"><title>Ledgerline console: not built</title></head>',
    '<body style="font-family: sans-serif; max-width: 40rem; margin: 3rem auto">',
    '<h1>The console front-end is not built</h1>',
    `<p>This server answers the console API, but found no <code>index.html</code> in <code>${escapeHtml(webRoot)}</code>.</p>`,
    '<p>Build it with <code>npx nx run @ledgerline/console-app:build</code> (or <code>npm run build</code>), ',
    'or point <code>--console-web-root</code> (<code>LEDGERLINE_CONSOLE_WEB_ROOT</code>) at a built copy, then reload.</p>',
    '</body></html>',
  ].join('');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * The path of a request's target, or undefined for one that has none. An
 * origin-form target may begin with `//` (a browser sends `//` for a console
 * address with a trailing slash), which URL parsing against a base would read
 * as a host and refuse: it is a path here.
 */
export function requestPath(target: string | undefined): string | undefined {
  const raw = target ?? '/';
  try {
    return raw.startsWith('/') ? new URL(`http://console${raw}`).pathname : new URL(raw).pathname;
  } catch {
    return undefined;
  }
}

/** The file a path names inside the root, or undefined for one that escapes it. */
function fileUnder(root: string, urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0')) return undefined;
  const file = normalize(join(root, decoded));
  return file === root || file.startsWith(root + sep) ? file : undefined;
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (found) => found.isFile(),
    () => false,
  );
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  response.end(body);
}

/**
 * Serves the front-end's built files from `webRoot`: a path that names a file
 * gets it; any other GET gets index.html, so the single-page app's own routes
 * load on a reload or a shared link; nothing at all built gets a 503 page
 * saying how to build it. Hashed assets (under /assets/) are cached for a
 * year, index.html never, so a new build is picked up at once.
 */
export function staticFiles(webRoot: string): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const root = resolve(webRoot);
  const index = join(root, 'index.html');
  return async (request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      send(
        response,
        405,
        'text/plain; charset=utf-8',
        'only GET and HEAD are served here; the API is under /ledgerline.v1.ConsoleService/\n',
      );
      return;
    }
    const path = requestPath(request.url);
    const file = path === undefined ? undefined : fileUnder(root, path);
    if (path === undefined || file === undefined) {
      send(response, 400, 'text/plain; charset=utf-8', 'bad path\n');
      return;
    }
    const target = (await isFile(file)) ? file : index;
    if (!(await isFile(target))) {
      send(response, 503, 'text/html; charset=utf-8', notBuiltPage(root));
      return;
    }
    const immutable = target !== index && path.startsWith('/assets/');
    response.writeHead(200, {
      'content-type': CONTENT_TYPES[extname(target)] ?? 'application/octet-stream',
      'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      'x-content-type-options': 'nosniff',
    });
    if (request.method === 'HEAD') response.end();
    else createReadStream(target).pipe(response);
  };
}
