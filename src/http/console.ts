import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import express, { Router } from "express";
import type { Config } from "../config.js";
import { AppError } from "../errors.js";
import { projectRoot } from "../project-root.js";
import { sendRestError } from "./respond.js";

/** Where `npm run build` writes the console (Vite's output, ui/vite.config.ts). */
export const consoleDir = join(projectRoot, "dist", "ui");

/** Hashed file names: a file's content never changes under its name. */
const immutable = "public, max-age=31536000, immutable";

/**
 * The console at /ui (docs/console.md): the page itself for /ui and every
 * path under it (the page routes in the browser), never cached, so a new
 * build is picked up at once, with AUTH_POLICY in a meta tag; its assets, whose names carry their content's
 * hash, cached for a year. Nothing else is served from the folder.
 */
export function consoleRouter(authPolicy: Config["authPolicy"], dir = consoleDir): Router {
  const route = Router();
  let page: string | undefined;
  const sendPage: express.RequestHandler = (_req, res) => {
    if (!page) {
      const file = join(dir, "index.html");
      if (!existsSync(file)) {
        sendRestError(res, new AppError("not_found", "The console is not built: run npm run build"));
        return;
      }
      // What the service asks of callers, so the page knows whether to ask for a sign-in before its first call.
      page = readFileSync(file, "utf8").replace(
        "<head>",
        `<head>\n    <meta name="auth-policy" content="${authPolicy}" />`,
      );
    }
    res.status(200).set({ "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache" }).send(page);
  };
  route.use(
    "/ui/assets",
    express.static(join(dir, "assets"), {
      index: false,
      redirect: false,
      fallthrough: true,
      etag: true,
      lastModified: false,
      setHeaders: (res) => res.setHeader("Cache-Control", immutable),
    }),
  );
  // A missing asset is 404, never the page: a script tag must not receive HTML.
  route.get("/ui/assets/{*rest}", (_req, res) => sendRestError(res, new AppError("not_found", "No such asset")));
  route.get(["/ui", "/ui/{*rest}"], sendPage);
  return route;
}

export const consoleRoutes = [{ method: "GET", path: "/ui" }];
