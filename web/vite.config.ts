// The dashboard's build (npm run build:web) and dev server (npm run dev:web). The server serves web/dist/ at `/`.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The dev server sends /api to a running Parley (npm start); the Host header is kept, so the server sees the
// dashboard's own origin and accepts its writes.
const apiTarget = process.env.PARLEY_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  build: {
    outDir: 'dist',
    // The previous build's chunks stay a while (scripts/web.mjs prunes them after a day), so a page opened before a
    // rebuild still loads the pages it has not loaded yet.
    emptyOutDir: false,
    assetsDir: 'assets',
    // .vite/manifest.json lists this build's files (bench/dashboard.ts reads it).
    manifest: true,
    // Figures for bench/README.md come from this report (scripts/web-size.mjs reads the files themselves).
    reportCompressedSize: false,
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
    proxy: { '/api': { target: apiTarget, changeOrigin: false } },
  },
});
