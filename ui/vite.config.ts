// The console's build (docs/console.md), run by `npm run build` (scripts/build.mjs):
// ui/ into dist/ui/, served by the service at /ui with its assets under /ui/assets/.
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/ui/",
  plugins: [react()],
  logLevel: "warn",
  // `npx vite --config ui/vite.config.ts`: the console with hot reload, calling the service on port 8000.
  server: {
    host: "127.0.0.1",
    proxy: { "/trpc": "http://127.0.0.1:8000", "/token": "http://127.0.0.1:8000" },
  },
  build: {
    outDir: fileURLToPath(new URL("../dist/ui", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "assets",
    // No inline script: the polyfill would be one more module in the entry, and every browser the console
    // supports preloads modules itself.
    modulePreload: { polyfill: false },
    // Every asset a file of its own, never a data: URL inlined in the script or the styles.
    assetsInlineLimit: 0,
    target: "es2022",
    sourcemap: false,
    reportCompressedSize: false,
  },
});
