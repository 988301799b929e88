/**
 * The app shell: error shapes of both API families, the generic 500 with a request id, docs
 * generated from the mounted routes, readiness, and logs that never carry secrets.
 */
import { describe, it, after, before } from "node:test";
import assert from "node:assert/strict";
import { Router } from "express";
import { z } from "zod";
import { mountRoute } from "../../control/http/route.ts";
import type { Feature } from "../../control/app/feature.ts";
import { startTestApp, type TestApp } from "../harness/app.ts";

/** A test-only feature with one route per family, to drive the shell. */
const probeFeature: Feature = {
  name: "probe",
  mount({ app, registry, config }) {
    const bot = { router: Router(), prefix: "", registry };
    mountRoute(bot, {
      method: "post",
      path: "/probe",
      family: "bot",
      tag: "probe",
      summary: "bot-family probe",
      body: z.object({ meeting_url: z.string(), record: z.boolean().default(true) }),
      responses: { 200: { description: "echo" } },
      handler: ({ res, body }) => void res.json(body),
    });
    bot.router.get("/probe/boom", () => {
      throw new Error("internal detail that must not leak");
    });
    const auth = { router: Router(), prefix: config.LocalLogin.EndpointPrefix, registry };
    mountRoute(auth, {
      method: "post",
      path: "/probe",
      family: "auth",
      tag: "probe",
      summary: "auth-family probe",
      body: z.object({ password: z.string().min(8, "Password must be at least 8 characters.") }),
      responses: { 204: { description: "ok" } },
      handler: ({ res }) => void res.status(204).end(),
    });
    app.use(bot.router);
    app.use(auth.prefix, auth.router);
    return {};
  },
};

describe("app shell", () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ features: [probeFeature] });
  });
  after(() => t.close());

  it("bot family: 422 detail list for a bad body, 404 detail for an unknown route", async () => {
    const bad = await t.request("POST", "/probe", { body: { record: "yes" } });
    assert.equal(bad.status, 422);
    const detail = (bad.body as { detail: Array<{ loc: unknown[]; msg: string; type: string }> }).detail;
    assert.ok(Array.isArray(detail));
    assert.deepEqual(detail.map((d) => d.loc).sort(), [["body", "meeting_url"], ["body", "record"]].sort());
    assert.equal(detail.find((d) => d.loc[1] === "meeting_url")?.type, "missing");
    const json = await t.request("POST", "/probe", { body: "{not json", headers: { "content-type": "application/json" } });
    assert.equal(json.status, 422);
    assert.equal((json.body as { detail: Array<{ type: string }> }).detail[0]?.type, "json_invalid");
    const missing = await t.request("GET", "/nope");
    assert.equal(missing.status, 404);
    assert.equal(typeof (missing.body as { detail: unknown }).detail, "string");
  });

  it("auth family: 400 errors array written for a person; 404 under the prefix", async () => {
    const bad = await t.request("POST", "/auth/probe", { body: { password: "short" } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { errors: ["Password must be at least 8 characters."] });
    const notJson = await t.request("POST", "/auth/probe", { body: "{", headers: { "content-type": "application/json" } });
    assert.equal(notJson.status, 400);
    assert.ok(Array.isArray((notJson.body as { errors: unknown }).errors));
    assert.equal((await t.request("GET", "/auth/unmapped")).status, 404);
  });

  it("an unknown error is a generic 500 naming the request id, details only in the log", async () => {
    const res = await t.request("GET", "/probe/boom");
    assert.equal(res.status, 500);
    const id = res.headers.get("x-request-id");
    assert.ok(id);
    assert.equal((res.body as { detail: string }).detail, `Internal server error (request id ${id})`);
    assert.ok(!res.text.includes("internal detail"));
    assert.ok(t.logs.lines.some((l) => l.includes("internal detail") && l.includes(id)));
  });

  it("documents every mounted route from the same schemas, as OpenAPI 3.1", async () => {
    const doc = (await t.request("GET", "/openapi.json")).body as {
      openapi: string;
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } }>>;
    };
    assert.equal(doc.openapi, "3.1.0");
    for (const path of ["/probe", "/auth/probe", "/healthz", "/readyz"]) assert.ok(doc.paths[path], `${path} documented`);
    const schema = doc.paths["/probe"]?.post?.requestBody?.content["application/json"]?.schema;
    assert.ok(schema?.properties.meeting_url && schema.properties.record);
    const docs = await t.request("GET", "/docs");
    assert.equal(docs.status, 200);
    assert.match(docs.text, /swagger-ui/);
    assert.equal((await fetch(`${t.url}/docs/assets/swagger-ui-bundle.js`)).status, 200);
  });

  it("health and readiness", async () => {
    assert.deepEqual((await t.request("GET", "/healthz")).body, { status: "ok" });
    const ready = await t.request("GET", "/readyz");
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { status: "ready", problems: {}, parts: { probe: { status: "ready", problems: {} } } });
  });

  it("never logs authorization headers, cookies, bodies or tokens in paths", async () => {
    const secret = "s3cr3t-Value-That-Must-Not-Leak";
    await t.request("POST", `/auth/probe?token=${secret}`, {
      body: { password: secret },
      headers: { authorization: `Bearer ${secret}`, cookie: `sid=${secret}`, "x-toamaisutaa-device": secret },
    });
    await t.request("PUT", `/audio/x/ingest/${secret}`, { body: "abc", headers: { "content-type": "audio/wav" } });
    assert.ok(t.logs.lines.length > 0);
    assert.deepEqual(t.logs.leaks([secret]), []);
  });
});
