import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { projectRoot } from "../../src/util/package-info.js";
import { describeWith, OPENSSL, REDIS } from "../helpers/external-programs.js";
import { freePort } from "../helpers/redis-server.js";
import { killNode, type RedisProcess, until } from "../helpers/redis-topologies.js";
import { headers, type Stack, startAdapter, startStack } from "../helpers/start-stack.js";

type Message = { role: string; content: string };

/** A chat turn: status and the query it went to. */
async function ask(url: string, messages: Message[]) {
  const response = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify({ model: "ask", messages }) });
  const body = (await response.json()) as any;
  return { status: response.status, queryId: response.headers.get("service-query-id"), content: (body.choices?.[0]?.message.content ?? "") as string };
}

/** A first turn on one adapter, then its follow-up on another: whether the second continued the first's query. */
async function continuesAcross(first: string, second: string): Promise<boolean> {
  const history: Message[] = [{ role: "user", content: "How much annual leave do I get?" }];
  const one = await ask(first, history);
  expect(one.status).toBe(200);
  const two = await ask(second, [...history, { role: "assistant", content: one.content }, { role: "user", content: "Does it carry over?" }]);
  expect(two.status).toBe(200);
  return two.queryId === one.queryId;
}

/** A redis-server with these arguments on a free loopback port (no persistence), not waited for. */
function spawnRedis(port: number, args: string[]): Pick<RedisProcess, "port" | "child"> {
  const child = spawn("redis-server", ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...args], { stdio: "ignore" });
  return { port, child };
}

/** The compiled entry point in a process of its own (so that NODE_EXTRA_CA_CERTS applies to it), serving on a free port. */
async function startReplica(environment: Record<string, string>): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, [join(projectRoot(), "dist/src/main.js")], {
    env: { ...process.env, PORT: "0", LOG_LEVEL: "info", LOG_FORMAT: "json", DEFAULT_WORKSPACE: "acme", REALTIME: "off", ...environment },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving (http:\/\/[\d.:]+)\/v1/.exec(output);
      if (match) resolve(match[1] as string);
    });
    child.once("exit", (code) => reject(new Error(`replica exited with ${code}: ${output}`)));
  });
  return { child, url, output: () => output };
}

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

describeWith(REDIS, "Redis with an ACL user and a password", () => {
  it("shares conversations with the right credentials, and keeps answering (never forking) with wrong ones, the password in no log", async () => {
    const port = await freePort();
    const redis = spawnRedis(port, ["--port", String(port), "--user", "default", "off", "--user", "adapter", "on", ">s3cret-pw", "~*", "&*", "+@all"]);
    const logs: string[] = [];
    const logger = pino({ level: "debug" }, { write: (line: string) => logs.push(line) });
    try {
      const probe = new Redis({ port, host: "127.0.0.1", username: "adapter", password: "s3cret-pw", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 50 });
      probe.on("error", () => undefined);
      await until(async () => {
        if (probe.status === "wait") await probe.connect();
        return (await probe.ping()) === "PONG";
      }, "the ACL Redis");
      probe.disconnect();
      const environment = { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_USERNAME: "adapter", REDIS_PASSWORD: "s3cret-pw", REDIS_KEY_PREFIX: "acl:" };
      const [first, second] = await Promise.all([startAdapter(stack.workspace.url, environment, logger), startAdapter(stack.workspace.url, environment, logger)]);
      const wrong = await startAdapter(stack.workspace.url, { ...environment, REDIS_PASSWORD: "not-the-password" }, logger);
      try {
        expect(await continuesAcross(first.url, second.url)).toBe(true);
        // Refused by Redis: new questions are answered, a follow-up it cannot look up is refused, not forked.
        const fresh = await ask(wrong.url, [{ role: "user", content: "remote work" }]);
        expect(fresh.status).toBe(200);
        const followUp = await ask(wrong.url, [{ role: "user", content: "remote work" }, { role: "assistant", content: "An answer from elsewhere." }, { role: "user", content: "more?" }]);
        expect(followUp.status).toBe(503);
      } finally {
        await Promise.all([first.close(), second.close(), wrong.close()]);
      }
      expect(logs.join("\n")).not.toContain("s3cret-pw");
      expect(logs.join("\n")).not.toContain("not-the-password");
      expect(logs.join("\n")).toContain("redis://127.0.0.1:"); // where Redis is, without the credentials
    } finally {
      await killNode(redis);
    }
  });
});

describeWith(REDIS, "Redis over TLS", () => describeWith(OPENSSL, "with a CA of the test's own", () => {
  it("shares conversations over rediss:// with the certificate checked against the hostname; an unknown CA is refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "adapter-redis-tls-"));
    const file = (name: string) => join(dir, name);
    // A CA of the test's own, and a server certificate for localhost signed by it.
    const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "ignore" });
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", file("ca.key"), "-out", file("ca.pem"), "-days", "1", "-subj", "/CN=adapter test CA");
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", file("server.key"), "-out", file("server.csr"), "-subj", "/CN=localhost");
    writeFileSync(file("san.ext"), "subjectAltName=DNS:localhost\n");
    openssl("x509", "-req", "-in", file("server.csr"), "-CA", file("ca.pem"), "-CAkey", file("ca.key"), "-CAcreateserial", "-out", file("server.pem"), "-days", "1", "-extfile", file("san.ext"));
    const port = await freePort();
    const redis = spawnRedis(port, [
      "--port", "0", "--tls-port", String(port),
      "--tls-cert-file", file("server.pem"), "--tls-key-file", file("server.key"), "--tls-ca-cert-file", file("ca.pem"),
      "--tls-auth-clients", "no",
    ]);
    const environment = { WORKSPACE_BASE_URL: stack.workspace.url, REDIS_URL: `rediss://localhost:${port}`, REDIS_KEY_PREFIX: "tls:" };
    const replicas: { child: ChildProcess; url: string; output: () => string }[] = [];
    try {
      replicas.push(await startReplica({ ...environment, NODE_EXTRA_CA_CERTS: file("ca.pem") }), await startReplica({ ...environment, NODE_EXTRA_CA_CERTS: file("ca.pem") }));
      const available = async (url: string) => (await (await fetch(`${url}/metrics`)).text()).includes("adapter_redis_available 1");
      await until(async () => (await available(replicas[0]?.url as string)) && (await available(replicas[1]?.url as string)), "the replicas' TLS connections");
      expect(await continuesAcross(replicas[0]?.url as string, replicas[1]?.url as string)).toBe(true);
      // Without the CA the certificate is not trusted: no connection, and the replica says so in its metrics.
      const untrusting = await startReplica(environment);
      replicas.push(untrusting);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(await available(untrusting.url)).toBe(false);
      expect((await ask(untrusting.url, [{ role: "user", content: "remote work" }])).status).toBe(200);
    } finally {
      for (const replica of replicas) replica.child.kill("SIGKILL");
      await killNode(redis);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
}));
