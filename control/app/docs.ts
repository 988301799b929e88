/**
 * `/openapi.json` (OpenAPI 3.1, from the zod schemas of every mounted route) and `/docs`, an
 * interactive page (Swagger UI, served from the swagger-ui-dist package: no CDN, works offline).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import express from "express";
import { projectPath } from "../../shared/runtime/layout.ts";
import type { Feature } from "./feature.ts";

const pkg = JSON.parse(readFileSync(projectPath("package.json"), "utf8")) as { name: string; version: string; description: string };
export const PACKAGE = { name: pkg.name, version: pkg.version, description: pkg.description };

const assets = createRequire(import.meta.url).resolve("swagger-ui-dist/package.json").replace(/package\.json$/, "");

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${pkg.name} API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#ui", deepLinking: true, tryItOutEnabled: true });`;

export const docsFeature: Feature = {
  name: "docs",
  mount({ app, registry }) {
    app.get("/openapi.json", (_req, res) => {
      res.json(registry.document({ title: `${pkg.name} API`, version: pkg.version, description: pkg.description }));
    });
    app.get("/docs", (_req, res) => void res.type("html").send(PAGE));
    app.get("/docs/init.js", (_req, res) => void res.type("js").send(INIT));
    app.use("/docs/assets", express.static(assets, { index: false, maxAge: "1h" }));
    return {};
  },
};
