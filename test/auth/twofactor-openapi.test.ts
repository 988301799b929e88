/**
 * /openapi.json lists what the two-factor code routes answer (audit F5): 409 on
 * `/2fa/totp/confirm` (two-factor already on, e.g. a racing confirmation won), and 429 for a
 * locked account on every bearer route that takes a code (`/2fa/step-up` included, audit F3).
 * The document does not depend on the database, so one provider suffices.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { startAuthApp, type AuthTestApp } from "./helpers.ts";

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

describe("two-factor routes in /openapi.json", () => {
  let app: AuthTestApp;
  before(async () => {
    app = await startAuthApp(providers()[0] ?? "sqlite");
  });
  after(async () => {
    await app.close();
  });

  test("confirm lists 409; the code routes list 429", async () => {
    const doc = (await app.request("GET", "/openapi.json")).body as Doc;
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path]?.[method]?.responses ?? {});
    assert.ok(statuses("/auth/2fa/totp/confirm", "post").includes("409"), "confirm 409");
    for (const [path, method] of [
      ["/auth/2fa/totp/confirm", "post"],
      ["/auth/2fa/step-up", "post"],
      ["/auth/2fa/recovery-codes", "post"],
      ["/auth/2fa", "delete"],
    ] as const) {
      assert.ok(statuses(path, method).includes("429"), `${method} ${path} 429: ${statuses(path, method).join(",")}`);
    }
  });
});
