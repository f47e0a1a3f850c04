// A bare node:http pass-through proxy: every request is piped to the upstream's POST /queries and
// the answer piped back, over a keep-alive pool. No parsing, no validation, no translation: issue 46's
// yardstick (the same two HTTP hops; in CPU, bench/translation-floor.mjs, on undici, costs less). It reports its CPU time and
// the requests it served on request (IPC), as the adapter's process does (bench/cpu.mjs).
import { Agent, createServer, request as forward } from "node:http";
import { serveForBenchmark } from "./reference-server.mjs";

const upstreamPort = Number(process.env.UPSTREAM_PORT);
const agent = new Agent({ keepAlive: true, maxSockets: 128 });
let requests = 0;
const server = createServer((request, response) => {
  requests += 1;
  const upstream = forward(
    {
      host: "127.0.0.1",
      port: upstreamPort,
      method: "POST",
      path: "/queries",
      agent,
      headers: {
        "content-type": "application/json",
        authorization: request.headers.authorization ?? "",
        "service-workspace": request.headers["service-workspace"] ?? "",
      },
    },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, { "content-type": "application/json" });
      answer.pipe(response);
    },
  );
  upstream.on("error", () => response.destroy());
  request.pipe(upstream);
});
serveForBenchmark(server, () => requests);
