// A bare node:http pass-through proxy: every request is piped to the upstream's POST /queries and
// the answer piped back, over a keep-alive pool. No parsing, no validation, no translation: the
// practical floor for any Node adapter in front of the same upstream.
import { Agent, createServer, request as forward } from "node:http";

const upstreamPort = Number(process.env.UPSTREAM_PORT);
const agent = new Agent({ keepAlive: true, maxSockets: 128 });
const server = createServer((request, response) => {
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
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => process.send?.({ port: server.address().port }));
