#!/usr/bin/env node
// `npx ledgerline <command>`: runs the built bundle (dist/apps/cli/main.js,
// which `npm start` and `npm run build` write) when it is there and newer than
// every source file it was built from, since plain node starts it in a fraction
// of the time tsx needs to compile the TypeScript. A checkout that was never
// built, or whose sources changed since, runs the TypeScript entry through tsx:
// the same commands, only slower to start.
'use strict';
const { readFileSync, statSync, writeFileSync } = require('node:fs');
const { dirname, join, resolve } = require('node:path');

const root = resolve(__dirname, '..', '..', '..');
const bundle = join(root, 'dist', 'apps', 'cli', 'main.js');

function modifiedMs(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * The source files the bundle holds, from its source map. The list is kept
 * beside the bundle once read, so a start reads a few kilobytes rather than
 * the whole map; it is read again whenever the bundle is rebuilt.
 */
function bundleSources(builtMs) {
  const listFile = `${bundle}.sources.json`;
  try {
    const kept = JSON.parse(readFileSync(listFile, 'utf8'));
    if (kept.builtMs === builtMs && Array.isArray(kept.files)) return kept.files;
  } catch {
    // No list yet, or one from another build: read the map.
  }
  const map = JSON.parse(readFileSync(`${bundle}.map`, 'utf8'));
  const files = map.sources.map((source) => resolve(dirname(bundle), source));
  try {
    writeFileSync(listFile, JSON.stringify({ builtMs, files }));
  } catch {
    // A read-only checkout: the map is read at every start instead.
  }
  return files;
}

function bundleIsCurrent() {
  const builtMs = modifiedMs(bundle);
  if (builtMs === undefined) return false;
  try {
    return bundleSources(builtMs).every((file) => {
      const sourceMs = modifiedMs(file);
      return sourceMs !== undefined && sourceMs <= builtMs;
    });
  } catch {
    return false;
  }
}

if (process.env.LEDGERLINE_CLI_FROM_SOURCE !== '1' && bundleIsCurrent()) {
  require(bundle);
} else {
  require('tsx/cjs/api').register();
  require(join(__dirname, '..', 'src', 'main.ts'));
}
