/**
 * The bot routes of recorder-bot.md's Endpoints table, as OpenAPI writes them (method, path with
 * the spec's parameter names), for the tests that check /openapi.json against the spec.
 */
export const BOT_SPEC_ROUTES: ReadonlyArray<readonly [string, string]> = [
  ["get", "/"],
  ["post", "/join"],
  ["get", "/status/{session_id}"],
  ["post", "/stop/{session_id}"],
  ["get", "/sessions"],
  ["post", "/audio/{session_id}/play"],
  ["post", "/audio/{session_id}/play/upload"],
  ["post", "/audio/{session_id}/stop"],
  ["post", "/audio/{session_id}/stream"],
  ["put", "/audio/{session_id}/ingest/{token}"],
  ["delete", "/audio/{session_id}/stream"],
];
