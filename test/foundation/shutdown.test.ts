/**
 * Clean restarts (issue 13), with the real process (control/main.ts) on both providers: SIGTERM
 * with sign-ins in flight loses none of them (every one answers 200), new connections are refused,
 * keep-alive clients hammering the database get no 5xx and no reset (their last answer says
 * `Connection: close`, their next connection is refused) while the pool closes, the process exits 0
 * and logs no error (the old stop closed the pool under running requests: "Cannot use a pool after
 * calling end on the pool").
 */
import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { connect } from "node:net";
import { describe, test } from "node:test";
import { freshDatabase, providers } from "../harness/databases.ts";
import { startServiceProcess } from "../harness/service-process.ts";

const PASSWORD = "correct horse battery staple";
/** Sign-ins in flight at SIGTERM: each is a full PBKDF2 (600,000 iterations), so they queue. */
const LOGINS = 24;
const LOOPS = 4;

const post = (url: string, body: unknown, token?: string): Promise<Response> =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });

/** Waits until the server has received `count` sign-ins: answered ones plus those in flight (less the scrape itself). */
async function waitForLogins(url: string, count: number): Promise<void> {
  let seen = 0;
  for (let i = 0; i < 600; i++) {
    const text = await (await fetch(`${url}/metrics`)).text();
    const inFlight = Number(/^http_requests_in_flight (\S+)$/m.exec(text)?.[1] ?? 0) - 1;
    const answered = [...text.matchAll(/^http_requests_total\{route="\/auth\/login",method="POST",status="\d+"\} (\S+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
    seen = inFlight + answered;
    if (seen >= count) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the server received ${seen} of ${count} sign-ins`);
}

/**
 * One GET on the loop's own keep-alive connection (an agent of one socket): the loop opens a new
 * connection only at its start and after an answer saying `Connection: close`, never beside a
 * pool shared with the sign-ins, which could open one just as the listener closes (a connection
 * in the kernel's accept queue is reset then: TCP's race, not a request the server dropped).
 */
const getOn = (agent: Agent, url: string, token: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.once("end", () => resolve(res.statusCode ?? 0));
      res.once("error", reject);
    });
    req.once("error", reject);
    req.end();
  });

/** The socket error's code: fetch puts it on `cause`, node:http on the error itself. */
const networkCode = (error: unknown): string => {
  const e = error as { code?: string; cause?: { code?: string }; message?: string };
  return String(e.cause?.code ?? e.code ?? e.message);
};

for (const provider of providers()) {
  describe(`SIGTERM with requests in flight (${provider})`, { timeout: 240_000 }, () => {
    test("every request in flight is answered, new connections are refused, the process exits 0 without errors", async (t) => {
      const database = await freshDatabase(provider);
      t.after(() => database.drop());
      const svc = await startServiceProcess({
        DATABASE_URL: database.url,
        LocalLogin__AllowSelfRegistration: "true",
        LocalLogin__RateLimit__Enabled: "false",
        // Concurrent sign-ins of one account would otherwise be capped at MaxFailedAttempts in flight.
        LocalLogin__LockoutEnabled: "false",
        SHUTDOWN_GRACE_SECONDS: "20",
      });
      t.after(() => svc.cleanup());

      const reg = await post(`${svc.url}/auth/register`, { userName: "drain", email: "drain@example.test", password: PASSWORD });
      assert.equal(reg.status, 201, await reg.clone().text());
      const { access_token: token } = (await reg.json()) as { access_token: string };

      let sigtermSent = false;
      const logins = Array.from({ length: LOGINS }, () =>
        post(`${svc.url}/auth/login`, { identifier: "drain", password: PASSWORD }).then(
          async (res) => ({ status: res.status, body: await res.text(), afterSignal: sigtermSent }),
          (error: unknown) => ({ status: 0, body: networkCode(error), afterSignal: sigtermSent }),
        ),
      );
      // Every sign-in has reached the server before the signal.
      await waitForLogins(svc.url, LOGINS);
      // Keep-alive clients reading the database in a loop (the benchmark's situation).
      const statuses: number[] = [];
      const loopErrors: string[] = [];
      const answered = new Set<number>();
      const loops = Array.from({ length: LOOPS }, async (_, loop) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        t.after(() => agent.destroy());
        for (;;) {
          try {
            statuses.push(await getOn(agent, `${svc.url}/auth/sessions`, token));
            answered.add(loop);
          } catch (error) {
            // The only acceptable end: the last response said `Connection: close` and the next
            // connection was refused. A reset would be a request lost in flight.
            loopErrors.push(`${sigtermSent ? "after" : "before"} SIGTERM: ${networkCode(error)}`);
            return;
          }
        }
      });

      // Every loop holds its connection before the signal.
      while (answered.size < LOOPS) await new Promise((r) => setTimeout(r, 10));
      svc.child.kill("SIGTERM");
      sigtermSent = true;

      // A new connection is refused (the listener closed at once): a raw TCP connect, never a pooled socket.
      const port = Number(new URL(svc.url).port);
      let refused = "";
      for (let i = 0; i < 200 && !refused; i++) {
        refused = await new Promise<string>((resolve) => {
          const socket = connect(port, "127.0.0.1");
          socket.once("connect", () => {
            socket.destroy();
            setTimeout(() => resolve(""), 25);
          });
          // A connection still in the accept queue when the listener closes is reset: try again.
          socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNRESET" ? "" : (error.code ?? error.message)));
        });
      }
      assert.equal(refused, "ECONNREFUSED");

      const answers = await Promise.all(logins);
      assert.deepEqual(answers.map((a) => a.status), Array(LOGINS).fill(200), JSON.stringify(answers.filter((a) => a.status !== 200)));
      // Some were still being answered when the signal came (each is a 600,000-iteration hash).
      assert.ok(answers.some((a) => a.afterSignal), "no sign-in was in flight at SIGTERM");
      await Promise.all(loops);
      assert.deepEqual(loopErrors, Array(LOOPS).fill("after SIGTERM: ECONNREFUSED"));
      assert.ok(statuses.length > 0);
      assert.deepEqual(statuses.filter((s) => s !== 200), []);

      const exit = await svc.exited;
      assert.deepEqual(exit, { code: 0, signal: null });
      const bad = svc.lines.filter((l) => typeof l.level === "number" && l.level >= 50);
      assert.deepEqual(bad, []);
      assert.ok(!svc.lines.some((l) => JSON.stringify(l).includes("Cannot use a pool")));
      assert.ok(svc.lines.some((l) => l.msg === "shutting down"));
    });
  });
}
