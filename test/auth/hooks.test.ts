// Attack: secrets leaking on their way to the recipient. A reset/verification/magic-link/
// invitation token or an issued password exists in the clear only for the hook call: it goes to
// the SMTP server or into a 0600 file, never into a log line or an error message, also when the
// transport fails. Links come from configuration only (a forged Host header cannot poison them).
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test, before, after } from "node:test";
import type { HookMessage } from "../../control/app/host.ts";
import { buildLink, HOOK_NAMES, resolveHooks, type MailFile } from "../../control/auth/hooks/index.ts";
import { ConfigError, parseConfig, type Config } from "../../control/config/index.ts";
import type { RawTree } from "../../control/config/sources.ts";
import { TEST_SIGNING_KEY } from "../harness/app.ts";
import { captureLogs } from "../harness/logs.ts";
import { startTestSmtp, type TestSmtp } from "../helpers/smtp/server.ts";

const configOf = (tree: RawTree): Config => parseConfig({ LocalLogin: { SigningKey: TEST_SIGNING_KEY }, ...tree });
const secret = (label: string) => `${label}-S3cr3t/+?&=${Math.random().toString(36).slice(2)}`;
const message = (over: Partial<HookMessage> = {}): HookMessage => ({ to: "ann@example.test", userId: "user-1", userName: "ann", ...over });

test("buildLink fills every {token} with the URL-encoded token", () => {
  const config = configOf({ Links: { MagicLink: "https://app.example/m?t={token}&again={token}" } });
  assert.equal(buildLink(config, "magic-link", "a b/c+d"), "https://app.example/m?t=a%20b%2Fc%2Bd&again=a%20b%2Fc%2Bd");
  assert.equal(buildLink(configOf({}), "password-reset", "x"), "http://localhost:8000/reset-password?token=x");
});

describe("smtp transport", () => {
  let smtp: TestSmtp;
  before(async () => {
    smtp = await startTestSmtp({ refuse: ["nobody@example.test"] });
  });
  after(() => smtp.close());

  test("each kind is mailed as a short plain message with its link or password", async () => {
    const logs = captureLogs();
    const config = configOf({ Mail: { Transport: "smtp", Smtp: { Url: smtp.url }, From: "auth@example.test" } });
    const hooks = await resolveHooks(config, {}, logs.logger);
    assert.deepEqual(Object.keys(hooks).sort(), [...HOOK_NAMES].sort());
    const token = secret("reset");
    const password = secret("pw");
    await hooks.passwordReset?.(message({ token }));
    await hooks.invitation?.(message({ to: "new@example.test", userName: null, token: "inv", link: "https://given.example/i/inv" }));
    await hooks.adminPasswordIssued?.(message({ password }));
    assert.equal(smtp.messages.length, 3);
    const [reset, invitation, admin] = smtp.messages;
    assert.equal(reset?.from, "auth@example.test");
    assert.deepEqual(reset?.to, ["ann@example.test"]);
    assert.match(reset?.raw ?? "", /^Subject: Reset your password/m);
    assert.match(reset?.raw ?? "", /Content-Type: text\/plain/i);
    assert.ok(reset?.text.includes(buildLink(config, "password-reset", token)), reset?.text);
    assert.ok(invitation?.text.includes("https://given.example/i/inv"), "a link given by the caller is used as is");
    assert.ok(admin?.text.includes(password), admin?.text);
    assert.deepEqual(logs.leaks([token, password, encodeURIComponent(token)]), []);
  });

  test("a refused delivery throws without the secret, and logs without the body", async () => {
    const logs = captureLogs();
    const config = configOf({ Mail: { Transport: "smtp", Smtp: { Url: smtp.url } } });
    const hooks = await resolveHooks(config, {}, logs.logger);
    const token = secret("magic");
    const error = await hooks.magicLink?.(message({ to: "nobody@example.test", token })).then(
      () => assert.fail("delivery to a refused recipient must throw"),
      (e: unknown) => e as Error,
    );
    assert.ok(error instanceof Error);
    assert.ok(!error.message.includes(token) && !error.message.includes(encodeURIComponent(token)), error.message);
    assert.equal(error.cause, undefined, "the transport's error (which may quote the message) is not carried");
    assert.ok(logs.lines.some((l) => l.includes("mail delivery failed") && l.includes('"kind":"magic-link"')));
    assert.deepEqual(logs.leaks([token, encodeURIComponent(token)]), []);
  });

  test("an unreachable server fails the hook, still without the secret", async () => {
    const logs = captureLogs();
    const config = configOf({ Mail: { Transport: "smtp", Smtp: { Url: "smtp://127.0.0.1:1" } } });
    const hooks = await resolveHooks(config, {}, logs.logger);
    const password = secret("pw");
    await assert.rejects(hooks.adminPasswordIssued!(message({ password })), (e: Error) => !e.message.includes(password));
    assert.deepEqual(logs.leaks([password]), []);
  });

  test("Mail:Hooks limits which hooks the transport registers", async () => {
    const config = configOf({ Mail: { Transport: "smtp", Smtp: { Url: smtp.url }, Hooks: ["password-reset", "invitation"] } });
    const hooks = await resolveHooks(config, {}, captureLogs().logger);
    assert.deepEqual(Object.keys(hooks).sort(), ["invitation", "passwordReset"]);
  });

  test("Mail:Hooks takes hook names as well as kinds, in any case; an unknown entry stops startup", async () => {
    for (const Hooks of [["passwordReset", "MagicLink"], "Password-Reset, magic_link", ["password-reset", "magicLink", "magic-link"]]) {
      const hooks = await resolveHooks(configOf({ Mail: { Transport: "smtp", Smtp: { Url: smtp.url }, Hooks } }), {}, captureLogs().logger);
      assert.deepEqual(Object.keys(hooks).sort(), ["magicLink", "passwordReset"], JSON.stringify(Hooks));
    }
    assert.throws(
      () => configOf({ Mail: { Transport: "smtp", Smtp: { Url: smtp.url }, Hooks: ["password-reset", "magic-links"] } }),
      (e: unknown) => e instanceof ConfigError && e.key === "Mail:Hooks" && e.message.includes("magic-links"),
    );
  });
});

describe("file transport", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "toa-mail-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test("one 0600 JSON file per message, with every field", async () => {
    const folder = join(dir, "one", "mail");
    const logs = captureLogs();
    const config = configOf({ Mail: { Transport: "file", File: { Directory: folder } } });
    const at = new Date("2025-03-04T05:06:07.089Z");
    const hooks = await resolveHooks(config, {}, logs.logger, { now: () => at });
    const token = secret("verify");
    const password = secret("pw");
    await hooks.emailVerification?.(message({ to: "new@example.test", token }));
    await hooks.adminPasswordIssued?.(message({ password }));

    const names = (await readdir(folder)).sort();
    assert.equal(names.length, 2);
    assert.ok(names.every((n) => n.endsWith(".json") && !n.startsWith(".")), names.join());
    assert.equal((await stat(folder)).mode & 0o777, 0o700);
    const files: MailFile[] = [];
    for (const name of names) {
      assert.equal((await stat(join(folder, name))).mode & 0o777, 0o600, name);
      files.push(JSON.parse(await readFile(join(folder, name), "utf8")) as MailFile);
    }
    const byKind = Object.fromEntries(files.map((f) => [f.kind, f]));
    assert.deepEqual(byKind["email-verification"], {
      kind: "email-verification",
      to: "new@example.test",
      token,
      link: buildLink(config, "email-verification", token),
      userId: "user-1",
      userName: "ann",
      createdAt: "2025-03-04T05:06:07.089Z",
    });
    assert.deepEqual(byKind["admin-password-issued"], {
      kind: "admin-password-issued",
      to: "ann@example.test",
      password,
      link: null,
      userId: "user-1",
      userName: "ann",
      createdAt: "2025-03-04T05:06:07.089Z",
    });
    assert.deepEqual(logs.leaks([token, password, encodeURIComponent(token)]), []);
  });

  test("concurrent messages each land whole, under distinct names, with no temp file left", async () => {
    const folder = join(dir, "many");
    const hooks = await resolveHooks(configOf({ Mail: { Transport: "file", File: { Directory: folder } } }), {}, captureLogs().logger, { now: () => new Date(0) });
    const tokens = Array.from({ length: 25 }, (_, i) => `token-${i}-${"x".repeat(2000)}`);
    await Promise.all(tokens.map((token) => hooks.magicLink!(message({ token }))));
    const names = await readdir(folder);
    assert.equal(names.length, 25);
    const seen = new Set<string>();
    for (const name of names) {
      assert.ok(name.endsWith(".json"), `leftover ${name}`);
      seen.add((JSON.parse(await readFile(join(folder, name), "utf8")) as MailFile).token ?? "");
    }
    assert.deepEqual([...seen].sort(), [...tokens].sort());
  });

  test("an unwritable directory fails the hook without the secret", async () => {
    const blocker = join(dir, "blocker");
    await writeFile(blocker, "a file where the folder should be");
    const logs = captureLogs();
    const hooks = await resolveHooks(configOf({ Mail: { Transport: "file", File: { Directory: join(blocker, "mail") } } }), {}, logs.logger);
    const token = secret("reset");
    await assert.rejects(hooks.passwordReset!(message({ token })), (e: Error) => !e.message.includes(token));
    assert.deepEqual(logs.leaks([token]), []);
  });
});

describe("Hooks:Module and precedence", () => {
  let dir: string;
  const calls: string[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "toa-hooks-"));
    (globalThis as { __toaHookCalls?: string[] }).__toaHookCalls = calls;
    await writeFile(
      join(dir, "hooks.mjs"),
      [
        "export async function passwordReset(m) { globalThis.__toaHookCalls.push(`module:passwordReset:${m.to}`); }",
        "export async function invitation(m) { globalThis.__toaHookCalls.push(`module:invitation:${m.link}`); }",
        "export const unrelated = 42;",
      ].join("\n"),
    );
    await writeFile(join(dir, "default.mjs"), "export default { magicLink: async (m) => { globalThis.__toaHookCalls.push(`default:magicLink:${m.to}`); } };\n");
    await writeFile(join(dir, "empty.mjs"), "export const nothing = 1;\n");
    await writeFile(join(dir, "broken.mjs"), "export const passwordReset = 'not a function';\n");
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test("host hooks win, then the module, then the transport", async () => {
    calls.length = 0;
    const mail = join(dir, "mail");
    const config = configOf({ Hooks: { Module: join(dir, "hooks.mjs") }, Mail: { Transport: "file", File: { Directory: mail } } });
    const hooks = await resolveHooks(config, { passwordReset: async (m) => void calls.push(`host:passwordReset:${m.to}`) }, captureLogs().logger);
    await hooks.passwordReset?.(message());
    await hooks.invitation?.(message({ link: "L" }));
    await hooks.magicLink?.(message({ token: "t" }));
    assert.deepEqual(calls, ["host:passwordReset:ann@example.test", "module:invitation:L"]);
    const files = await readdir(mail);
    assert.equal(files.length, 1, "only the magic link fell through to the transport");
  });

  test("hooks on the default export are found; no transport means no other hooks", async () => {
    calls.length = 0;
    const hooks = await resolveHooks(configOf({ Hooks: { Module: join(dir, "default.mjs") } }), {}, captureLogs().logger);
    assert.deepEqual(Object.keys(hooks), ["magicLink"]);
    await hooks.magicLink?.(message());
    assert.deepEqual(calls, ["default:magicLink:ann@example.test"]);
  });

  test("a module that is missing, empty or exports a non-function is a configuration error", async () => {
    for (const file of ["missing.mjs", "empty.mjs", "broken.mjs"]) {
      await assert.rejects(
        resolveHooks(configOf({ Hooks: { Module: join(dir, file) } }), {}, captureLogs().logger),
        (e: unknown) => e instanceof ConfigError && e.message.includes("Hooks:Module"),
        file,
      );
    }
  });

  test("Mail:Transport none and no module: only host hooks", async () => {
    const hooks = await resolveHooks(configOf({}), { invitation: async () => {} }, captureLogs().logger);
    assert.deepEqual(Object.keys(hooks), ["invitation"]);
  });
});

test("a hook message logged by mistake has its secrets redacted", () => {
  const logs = captureLogs();
  const token = secret("tok");
  const password = secret("pw");
  logs.logger.info({ hookMessage: message({ token, password, link: `https://app.example/r?token=${encodeURIComponent(token)}` }) }, "oops");
  assert.equal(logs.lines.length, 1);
  assert.deepEqual(logs.leaks([token, password, encodeURIComponent(token)]), []);
});
