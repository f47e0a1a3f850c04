// An interface-conformant upstream whose list shows no partial output (the case the realtime
// channel exists for), with a Centrifugo-protocol channel (the embedded workspace's endpoint) on
// its own port. Each query publishes its first word FIRST_MS after its create, a word every
// WORD_MS, and ends END_MS after its create: the list then shows it PROCESSED and the channel
// publishes the terminal status in the same turn. The benchmark asks (IPC) when each query's first
// word was published and when it ended, in the shared wall clock of the machine.
import { createServer } from "node:http";
import { CentrifugoEndpoint, REALTIME_PATH } from "../dist/src/embedded-workspace/realtime/centrifugo-endpoint.js";

const FIRST_MS = Number(process.env.FIRST_MS ?? 150);
const WORD_MS = Number(process.env.WORD_MS ?? 5);
const END_MS = Number(process.env.END_MS ?? 300);
const words = "Employees receive 25 days of paid annual leave per calendar year [1]. Unused leave of up to 5 days carries over [1].".match(/\s*\S+/g);
const output = `${words.join("")}\n\nSources:\n[1] handbook.md — Leave policy`;
const clock = () => performance.timeOrigin + performance.now();
const endpoint = new CentrifugoEndpoint(() => Date.now());
const queries = new Map();
const times = new Map();

function start(id, channel) {
  const query = { id, content: "question", status: "PROCESSING", output: "", steps: [] };
  queries.set(id, query);
  const timing = {};
  times.set(id, timing);
  words.forEach((word, index) => {
    setTimeout(() => {
      if (index === 0) timing.firstPublishedAt = clock();
      endpoint.publish(channel, { delta: word });
    }, FIRST_MS + index * WORD_MS);
  });
  setTimeout(() => {
    query.status = "PROCESSED";
    query.output = output;
    timing.endedAt = clock();
    endpoint.publish(channel, { status: "PROCESSED" });
  }, END_MS);
  return query;
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    response.setHeader("content-type", "application/json");
    if (request.method === "POST" && request.url === "/queries") {
      const { id } = JSON.parse(Buffer.concat(chunks).toString());
      const channel = `queries:${id}`;
      const since = endpoint.position(channel);
      const token = endpoint.connectionToken(request.headers.authorization ?? "");
      const query = start(id, channel);
      response.end(JSON.stringify({
        ...query,
        channel,
        token,
        subscription_token: endpoint.subscriptionToken(token, channel),
        ws_url: `ws://${request.headers.host}${REALTIME_PATH}`,
        since,
      }));
    } else if (request.url?.startsWith("/queries")) {
      // Newest first, as the interface's list is assumed to be; only recent queries are shown.
      const data = [...queries.values()].slice(-100).reverse();
      response.end(JSON.stringify({ data, next_cursor: null, has_more: false }));
    } else {
      response.end('{"status":"ok"}');
    }
  });
});
server.on("upgrade", (request, socket, head) => endpoint.handleUpgrade(request, socket, head));
server.keepAliveTimeout = 60_000;
process.on("message", (message) => {
  if (message?.times) process.send?.({ timings: Object.fromEntries(message.times.map((id) => [id, times.get(id) ?? null])) });
});
server.listen(0, "127.0.0.1", () => process.send?.({ port: server.address().port }));
