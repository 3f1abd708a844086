import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Router } from "express";
import swaggerUi from "swagger-ui-express";

const redocBundlePath = createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js");

// ReDoc 2 hard-codes its attribution logo on a CDN (`cdn.redoc.ly`); the docs
// make no request beyond this service, so the bundle is served with a blank
// inline image in its place.
const redocLogo = "https://cdn.redoc.ly/redoc/logo-mini.svg";
const blankImage = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E";
let redocBundle: string | undefined;
const loadRedocBundle = () => {
  redocBundle ??= readFileSync(redocBundlePath, "utf8").replace(redocLogo, blankImage);
  return redocBundle;
};

const redocPage = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Agent Management API — ReDoc</title>
    <link rel="icon" href="data:," />
  </head>
  <body>
    <redoc spec-url="/openapi.json" schema-definitions-tag-name="Schemas"></redoc>
    <script src="/redoc/redoc.standalone.js"></script>
  </body>
</html>`;

// Swagger UI resolves the document's relative tokenUrl `token` against the
// page's URL, not the server URL as OpenAPI says (swagger-api/swagger-ui#3992).
// So the page is served at /docs, where `token` means /token, and not at
// /docs/, where it would mean /docs/token; its assets stay under /docs/.
const swaggerUiPage = swaggerUi
  .generateHTML(undefined, {
    customSiteTitle: "Agent Management API — Swagger UI",
    swaggerUrl: "/openapi.json",
    // validatorUrl: null, or Swagger UI shows a badge image fetched from
    // validator.swagger.io (with this document's URL) on any host but localhost.
    swaggerOptions: { persistAuthorization: true, validatorUrl: null },
  })
  .replaceAll(/(src|href)="\.\//g, '$1="/docs/');

/** /openapi.json, /docs (Swagger UI) and /redoc, every asset served from this process. */
export function docsRouter(document: object): Router {
  const docs = Router();
  docs.get("/openapi.json", (_req, res) => {
    res.json(document);
  });
  docs.get("/docs", (req, res) => {
    // The route matches /docs/ as well: that is sent to the page's one URL.
    if (req.path.endsWith("/")) res.redirect(301, `/docs${req.originalUrl.slice("/docs/".length)}`);
    else res.type("html").send(swaggerUiPage);
  });
  // swagger-ui-init.js (written by generateHTML above) and Swagger UI's own files.
  docs.use("/docs", swaggerUi.serve);
  docs.get("/redoc", (_req, res) => {
    res.type("html").send(redocPage);
  });
  docs.get("/redoc/redoc.standalone.js", (_req, res) => {
    res.type("js").set("Cache-Control", "public, max-age=86400").send(loadRedocBundle());
  });
  return docs;
}

export const docsRoutes = [
  { method: "GET", path: "/openapi.json" },
  { method: "GET", path: "/docs" },
  { method: "GET", path: "/redoc" },
];
