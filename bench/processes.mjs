// The benchmark's servers run as child processes of their own; this starts one and asks it for stats.
import { fork } from "node:child_process";
import autocannon from "autocannon";

const here = new URL(".", import.meta.url);

/** Forks `file` (beside this one) and resolves once it reports its port. */
export function startProcess(file, env = {}, execArgv = []) {
  return new Promise((resolve, reject) => {
    const child = fork(new URL(file, here), [], { env: { ...process.env, ...env }, execArgv, stdio: ["ignore", "ignore", "inherit", "ipc"] });
    child.once("error", reject);
    child.once("message", (message) => resolve({ child, port: message.port, url: `http://127.0.0.1:${message.port}` }));
  });
}

/** Asks an adapter process (adapter-process.mjs) for its memory, event-loop delay and counters. */
export function statsOf(child, request = "stats") {
  return new Promise((resolve) => {
    const listener = (message) => {
      if (message.stats) {
        child.off("message", listener);
        resolve(message.stats);
      }
    };
    child.on("message", listener);
    child.send(request);
  });
}

/** The environment of an adapter process measured at 50 connections against `upstreamUrl` (no cap gets in the way). */
export function adapterEnvironment(upstreamUrl) {
  return {
    UPSTREAM_URL: upstreamUrl,
    DEFAULT_WORKSPACE: "bench",
    LOG_LEVEL: "info",
    LOG_FORMAT: "json",
    MAX_CONCURRENT_REQUESTS: "100000",
    MAX_CONCURRENT_PER_WORKSPACE: "100000",
  };
}

/** A chat request body for the benchmark (streamed when `stream`). */
export function chatBody(stream = false) {
  return JSON.stringify({ model: "ask", stream, messages: [{ role: "user", content: "How much annual leave do employees get?" }] });
}

/** autocannon against an adapter's chat endpoint at 50 connections. */
export function loadAdapter(adapterUrl, { seconds, stream = false }) {
  return autocannon({
    url: `${adapterUrl}/v1/chat/completions`,
    method: "POST",
    headers: { authorization: "Bearer k", "content-type": "application/json" },
    body: chatBody(stream),
    connections: 50,
    duration: seconds,
  });
}
