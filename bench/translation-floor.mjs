// The floor of any adapter that translates JSON between the two hops, with the adapter's own HTTP
// pieces and nothing else: node:http serves, the request is read and parsed, one POST /queries goes
// upstream through an undici Agent's dispatch (as src/upstream/transport.ts sends it), the answer is
// parsed, a chat completion holding its text is serialized and written with its length. No
// authentication, validation, citations, usage, logging, metrics or memory: what is left of the
// adapter's CPU above this row is what its features cost (bench/cpu.mjs). It reports its CPU time
// and requests on request (IPC), as bench/bare-proxy.mjs does.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { Agent } from "undici";
import { serveForBenchmark } from "./reference-server.mjs";

const origin = `http://127.0.0.1:${process.env.UPSTREAM_PORT}`;
const agent = new Agent({ connections: 128, keepAliveTimeout: 30_000 });
let requests = 0;

function ask(body, authorization, respond) {
  const id = randomUUID();
  const chunks = [];
  agent.dispatch(
    {
      origin,
      path: "/queries",
      method: "POST",
      headers: { "content-type": "application/json", authorization, "service-workspace": "bench" },
      body: JSON.stringify({ id, content: body.messages.at(-1).content, mode: body.model }),
    },
    {
      onRequestStart() {},
      onResponseStart() {},
      onResponseData(_controller, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        respond(id, JSON.parse(Buffer.concat(chunks).toString("utf8")));
      },
      onResponseError() {
        respond(id, undefined);
      },
    },
  );
}

const server = createServer((request, response) => {
  requests += 1;
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    ask(body, request.headers.authorization ?? "", (id, answer) => {
      if (!answer) {
        response.writeHead(502).end();
        return;
      }
      const message = { role: "assistant", content: answer.output, refusal: null };
      const completion = {
        id: `chatcmpl-${id}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: "stop" }],
      };
      const bytes = Buffer.from(JSON.stringify(completion), "utf8");
      response.writeHead(200, { "content-type": "application/json", "content-length": bytes.length });
      response.end(bytes);
    });
  });
});
serveForBenchmark(server, () => requests);
