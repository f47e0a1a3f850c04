// Preloaded into Portkey's open-source gateway (test/helpers/portkey-gateway.ts): its start script
// listens on every interface at a fixed port (8787); this binds it to loopback on a free port
// instead, and prints the port, so that tests talk only to loopback and never collide.
import http from "node:http";

const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function listenOnLoopback(...args) {
  this.once("listening", () => process.stdout.write(`\nPORTKEY_LISTENING ${this.address().port}\n`));
  return listen.call(this, { host: "127.0.0.1", port: 0 }, ...args.filter((arg) => typeof arg === "function"));
};
