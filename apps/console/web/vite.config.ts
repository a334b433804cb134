import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

// The console server serves these files from dist/apps/console-web. Asset URLs
// are relative so the console works behind a proxy that mounts it under a path.
export default defineConfig({
  root: here,
  base: './',
  plugins: [react()],
  resolve: {
    // The generated ConsoleService and its messages, straight from libs/proto's
    // generated code: the package index also loads what only Node services use.
    alias: { '@gen': fileURLToPath(new URL('../../../libs/proto/src/gen/ledgerline/v1', import.meta.url)) },
  },
  build: {
    outDir: fileURLToPath(new URL('../../../dist/apps/console-web', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    // The whole app is one page set; one chunk per library family keeps the
    // first load cacheable across console upgrades that only change our code.
    rollupOptions: {
      output: {
        manualChunks(id: string) {
          if (id.includes('node_modules/uplot')) return 'uplot';
          if (/node_modules\/(react|react-dom|react-router|scheduler)\//.test(id)) return 'react';
          if (id.includes('node_modules/@bufbuild') || id.includes('node_modules/@connectrpc')) return 'connect';
          return undefined;
        },
      },
    },
  },
});
