// What the benchmark's reference servers (bare-proxy.mjs, translation-floor.mjs) share with the
// adapter's process: they listen on a free loopback port and say which, and report their CPU time and
// the requests they served on request (IPC), so that bench/cpu.mjs reads every row the same way.

/** Listens on a free loopback port, tells the parent, and answers its "stats" messages. */
export function serveForBenchmark(server, requestsServed) {
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => process.send?.({ port: server.address().port }));
  process.on("message", (message) => {
    if (message === "stats") {
      const cpu = process.cpuUsage();
      process.send?.({ stats: { cpuMicros: cpu.user + cpu.system, requests: requestsServed() } });
    }
  });
}
