/**
 * A/B of the worker's Node flags (`node --import tsx bench/bot/node-flags-ab.ts`): two Node
 * processes (bench/bot/node-flags-child.ts) each load Playwright, start PulseAudio and Chromium and
 * join the fixture's realistic meeting at once, A with AB_NODE_BASE and B with AB_NODE_FLAGS too;
 * after both have joined they measure the same window (AB_SECONDS) and report their own PSS and
 * CPU (the Node process only: Chromium's are flags-ab.ts's business). AB_ROUNDS rounds.
 * AB_NODE_ENV ("NAME=value NAME2=value") is B's environment on top of this one's (glibc tunables).
 */
import { fork } from "node:child_process";
import { startTeamsFixture } from "../../test/fixture/teams/server.ts";
import { envPairs, machine, mean, words } from "./measure.ts";

const FLAGS = words(process.env.AB_NODE_FLAGS);
/** Flags both sides get, to stack a candidate on ones already chosen. */
const BASE = words(process.env.AB_NODE_BASE);
const B_ENV = envPairs(process.env.AB_NODE_ENV);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 3);
const SECONDS = Number(process.env.AB_SECONDS ?? 20);
const CHILD = new URL("./node-flags-child.ts", import.meta.url).pathname;
interface Result {
  pss: number;
  heapMb: number;
  cpu: number;
}

const fixture = await startTeamsFixture();
console.log(`node-flags-ab: B adds [${FLAGS.join(" ")}]${Object.keys(B_ENV).length ? ` and env ${process.env.AB_NODE_ENV}` : ""}${BASE.length ? `, both have [${BASE.join(" ")}]` : ""}; ${ROUNDS} rounds × ${SECONDS} s, A and B at once; ${machine()}`);
const a: Result[] = [];
const b: Result[] = [];
try {
  for (let i = 0; i < ROUNDS; i++) {
    const sides = [BASE, [...BASE, ...FLAGS]].map((flags, side) => {
      const meeting = fixture.createMeeting({ lobby: false, churn: true, video: true });
      const child = fork(CHILD, [meeting.joinUrl, String(SECONDS)], { execArgv: ["--import", "tsx", ...flags], env: side === 1 ? { ...process.env, ...B_ENV } : process.env, stdio: "inherit" });
      const joined = new Promise<void>((resolve, reject) => {
        child.once("message", () => resolve());
        child.once("exit", (code) => reject(new Error(`side exited with ${code} before joining`)));
      });
      const result = joined.then(() => new Promise<Result>((resolve) => child.once("message", (m) => resolve(m as Result))));
      return { child, joined, result };
    });
    await Promise.all(sides.map((s) => s.joined));
    for (const s of sides) s.child.send("go");
    const [ra, rb] = (await Promise.all(sides.map((s) => s.result))) as [Result, Result];
    await Promise.all(sides.map((s) => new Promise((r) => s.child.once("exit", r))));
    a.push(ra);
    b.push(rb);
    for (const [side, r] of [["A", ra], ["B", rb]] as const) console.log(`${side}${i + 1}: Node PSS ${r.pss.toFixed(0)} MB (heap ${r.heapMb.toFixed(0)} MB), CPU ${r.cpu.toFixed(1)} % core`);
  }
  const m = (l: Result[], k: keyof Result) => mean(l.map((r) => r[k]));
  for (const [side, l] of [["mean A", a], ["mean B", b]] as const) console.log(`${side}: Node PSS ${m(l, "pss").toFixed(0)} MB (heap ${m(l, "heapMb").toFixed(0)} MB), CPU ${m(l, "cpu").toFixed(1)} % core`);
  console.log(`B/A: PSS ${(m(b, "pss") / m(a, "pss")).toFixed(2)}, CPU ${(m(b, "cpu") / m(a, "cpu")).toFixed(2)}`);
  console.log(`end: ${machine()}`);
} finally {
  await fixture.close();
}
