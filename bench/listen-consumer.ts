/**
 * Consumers for `make bench-listen`'s CPU figures, in a process of their own so that the bench
 * process's CPU is the control plane's alone: connects to every URL given, reads and discards.
 */
import { WebSocket } from "ws";

let frames = 0;
for (const url of process.argv.slice(2)) {
  const ws = new WebSocket(url);
  ws.on("message", (_data, isBinary) => {
    if (isBinary) frames++;
  });
  ws.on("error", (err) => console.error(err.message));
}
process.once("SIGTERM", () => {
  console.log(JSON.stringify({ frames }));
  process.exit(0);
});
