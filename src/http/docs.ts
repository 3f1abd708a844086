import { createRequire } from "node:module";
import { Router } from "express";
import swaggerUi from "swagger-ui-express";

const redocBundle = createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js");

const redocPage = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Agent Management API — ReDoc</title>
  </head>
  <body>
    <redoc spec-url="/openapi.json"></redoc>
    <script src="/redoc/redoc.standalone.js"></script>
  </body>
</html>`;

/** /openapi.json, /docs (Swagger UI) and /redoc, every asset served from this process. */
export function docsRouter(document: object): Router {
  const docs = Router();
  docs.get("/openapi.json", (_req, res) => {
    res.json(document);
  });
  docs.use(
    "/docs",
    swaggerUi.serve,
    swaggerUi.setup(undefined, {
      customSiteTitle: "Agent Management API — Swagger UI",
      swaggerUrl: "/openapi.json",
      swaggerOptions: { persistAuthorization: true },
    }),
  );
  docs.get("/redoc", (_req, res) => {
    res.type("html").send(redocPage);
  });
  docs.get("/redoc/redoc.standalone.js", (_req, res) => {
    res.sendFile(redocBundle, { maxAge: "1d" });
  });
  return docs;
}

export const docsRoutes = [
  { method: "GET", path: "/openapi.json" },
  { method: "GET", path: "/docs" },
  { method: "GET", path: "/redoc" },
];
