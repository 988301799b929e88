// normalizeMeetingUrl: which links the bot may be sent to (decisions.md, Bot API: meeting_url).
import assert from "node:assert/strict";
import { test } from "node:test";
import { normalizeMeetingUrl, webJoinUrl } from "../../worker/teams/url.ts";

const HOSTS = ["teams.microsoft.com", "teams.live.com", "127.0.0.1:4567"];

function ok(raw: string, hosts = HOSTS): URL {
  const r = normalizeMeetingUrl(raw, hosts);
  assert.ok("url" in r, `${raw}: ${JSON.stringify(r)}`);
  return new URL(r.url);
}

function refused(raw: string, pattern: RegExp, hosts = HOSTS): void {
  const r = normalizeMeetingUrl(raw, hosts);
  assert.ok("error" in r, `${raw} should be refused`);
  assert.match(r.error, pattern);
}

test("meetup-join link: kept, with the web-client parameters added", () => {
  const raw = "https://teams.microsoft.com/l/meetup-join/19%3ameeting_abc%40thread.v2/0?context=%7b%22Tid%22%3a%22t%22%7d";
  const u = ok(raw);
  assert.equal(u.pathname, "/l/meetup-join/19%3ameeting_abc%40thread.v2/0");
  assert.equal(u.searchParams.get("context"), '{"Tid":"t"}');
  const added: Array<[string, string]> = [["msLaunch", "false"], ["type", "meetup-join"], ["directDl", "true"], ["enableMobilePage", "true"], ["suppressPrompt", "true"]];
  for (const [k, v] of added) {
    assert.equal(u.searchParams.get(k), v, k);
  }
});

test("existing meetup-join parameters are not overwritten", () => {
  const u = ok("https://teams.microsoft.com/l/meetup-join/a/0?msLaunch=true");
  assert.equal(u.searchParams.get("msLaunch"), "true");
});

test("meet link with passcode, teams.live.com and teams.microsoft.com", () => {
  assert.equal(ok("https://teams.live.com/meet/9312345?p=AbCd").toString(), "https://teams.live.com/meet/9312345?p=AbCd");
  assert.equal(ok("https://teams.microsoft.com/meet/42?p=x").searchParams.get("p"), "x");
});

test("v2 link keeps the meeting in the fragment", () => {
  const raw = "https://teams.microsoft.com/v2/?meetingjoin=true#/meet/123?p=pw&anon=true";
  assert.equal(ok(raw).toString(), raw);
  ok("https://teams.microsoft.com/_#/l/meetup-join/19:meeting_x@thread.v2/0");
});

test("host:port entries allow exactly that port; plain entries only the default port", () => {
  ok("http://127.0.0.1:4567/meet/1?p=2");
  refused("http://127.0.0.1:4568/meet/1?p=2", /not allowed/);
  refused("https://teams.microsoft.com:8443/meet/1?p=2", /not allowed/);
  ok("https://TEAMS.microsoft.com/meet/1?p=2");
});

test("an entry naming the scheme's default port is the plain host; IPv6 entries keep their brackets", () => {
  ok("https://teams.microsoft.com/meet/1?p=2", ["teams.microsoft.com:443"]);
  ok("https://teams.microsoft.com:443/meet/1?p=2", ["teams.microsoft.com"]);
  ok("http://127.0.0.1/meet/1?p=2", ["127.0.0.1:80"]);
  refused("http://127.0.0.1:8080/meet/1?p=2", /not allowed/, ["127.0.0.1:80"]);
  ok("http://[::1]:4567/meet/1?p=2", ["[::1]:4567"]);
  refused("http://[::1]:4568/meet/1?p=2", /not allowed/, ["[::1]:4567"]);
});

test("a meetup-join link cut after the conversation id is still a meeting link", () => {
  ok("https://teams.microsoft.com/l/meetup-join/19%3ameeting_abc%40thread.v2");
});

test("refused: other schemes, other hosts, look-alike hosts, credentials, not a meeting, garbage", () => {
  refused("javascript:alert(1)", /http/);
  refused("file:///etc/passwd", /http/);
  refused("ftp://teams.microsoft.com/meet/1", /http/);
  refused("https://evil.example/meet/1?p=2", /not allowed/);
  refused("https://teams.microsoft.com.evil.example/meet/1?p=2", /not allowed/);
  refused("https://user:pw@teams.microsoft.com/meet/1?p=2", /credentials/);
  refused("https://teams.microsoft.com/", /not a Teams meeting link/);
  refused("https://teams.microsoft.com/v2/", /not a Teams meeting link/);
  refused("https://teams.microsoft.com/settings", /not a Teams meeting link/);
  refused("not a url", /valid URL/);
  refused("https://teams.microsoft.com/meet/1", /not allowed/, []);
});

test("webJoinUrl: the page the browser opens for a link the API stored as sent", () => {
  const raw = "https://TEAMS.microsoft.com/l/meetup-join/19%3ameeting_abc%40thread.v2/0?context=%7b%7d";
  const u = new URL(webJoinUrl(raw));
  assert.equal(u.host, "teams.microsoft.com");
  assert.equal(u.searchParams.get("msLaunch"), "false");
  assert.equal(u.searchParams.get("context"), "{}");
  assert.equal(webJoinUrl("https://teams.live.com/meet/9312345?p=AbCd"), "https://teams.live.com/meet/9312345?p=AbCd");
  assert.deepEqual(normalizeMeetingUrl(raw, HOSTS), { url: webJoinUrl(raw) });
});
