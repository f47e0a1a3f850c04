// A stand-in OTLP/HTTP receiver for the benchmark, in its own process (so that its work is not
// counted against the adapter): it reads each export whole, answers 200 with an empty response,
// and counts exports and bytes, reported on request (IPC).
import { createServer } from "node:http";

let exports = 0;
let bytes = 0;
const server = createServer((request, response) => {
  request.on("data", (chunk) => {
    bytes += chunk.length;
  });
  request.on("end", () => {
    exports += 1;
    response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
  });
});
server.listen(0, "127.0.0.1", () => process.send?.({ port: server.address().port }));
process.on("message", (message) => {
  if (message === "stats") process.send?.({ sink: { exports, bytes } });
});
