import { mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/config.js";
import { createAdapter } from "../../../src/server/create-adapter.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// docs/governance.md#named-keys: ADAPTER_API_KEYS_FILE is re-read when it changes, without a restart.
const ask = (stack: Stack, key: string) =>
  fetch(`${stack.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "service-workspace": "acme", "content-type": "application/json" },
    body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: "leave policy" }] }),
  }).then(async (response) => ({ status: response.status, body: await response.text() }));

describe("a file of client keys", () => {
  const folder = mkdtempSync(join(tmpdir(), "adapter-keys-"));
  const file = join(folder, "keys");
  const lines: string[] = [];
  const logger = pino({ level: "info" }, new Writable({ write: (chunk, _encoding, done) => done(void lines.push(String(chunk))) }));
  let stack: Stack;

  beforeAll(async () => {
    writeFileSync(file, "# the search team\nteam-search=sk-file-search-1\n");
    stack = await startStack({ WORKSPACE_API_KEY: API_KEY, ADAPTER_API_KEYS_FILE: file, ADMIN_API_KEYS: "sk-file-admin" }, {}, { logger });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("is read at start, and again when it is rewritten or renamed over: a key added works, a key removed is refused", async () => {
    expect((await ask(stack, "sk-file-search-1")).status).toBe(200);
    expect((await ask(stack, "sk-file-legal-1")).status).toBe(401);
    writeFileSync(file, "team-search=sk-file-search-1\nteam-legal=sk-file-legal-1\n");
    await waitFor(async () => (await ask(stack, "sk-file-legal-1")).status === 200, "the added key to be accepted");
    // As a secret mount or an editor replaces it: a new file renamed over the old.
    writeFileSync(`${file}.new`, "team-legal=sk-file-legal-1\n");
    renameSync(`${file}.new`, file);
    await waitFor(async () => (await ask(stack, "sk-file-search-1")).status === 401, "the removed key to be refused");
    expect((await ask(stack, "sk-file-legal-1")).status).toBe(200);
  });

  it("that does not parse keeps the keys read before it, and the log says so without quoting a key", async () => {
    writeFileSync(file, "team-legal=sk-file-legal-1\nbad name=sk-file-secret-9\n");
    await waitFor(() => lines.some((line) => line.includes("does not parse")), "the log line of a file that does not parse");
    expect((await ask(stack, "sk-file-legal-1")).status).toBe(200);
    expect((await ask(stack, "sk-file-secret-9")).status).toBe(401);
    // The admin's key may not become a client key through the file.
    writeFileSync(file, "team-legal=sk-file-legal-1\nsk-file-admin\n");
    await waitFor(() => lines.some((line) => line.includes("an admin's key cannot be a client key")), "the refusal of an admin's key");
    // …and an admin's key never answers (docs/governance.md#named-keys): a 403 that says so.
    expect((await ask(stack, "sk-file-admin")).status).toBe(403);
    expect(lines.join("")).not.toMatch(/sk-file-(secret|admin|legal|search)/);
  });

  it("stops start-up when missing or malformed, naming the file and the entry, never a key", () => {
    const config = (path: string) => loadConfig({ WORKSPACE_API_KEY: API_KEY, ADAPTER_API_KEYS_FILE: path });
    const silent = { logger: pino({ level: "silent" }) };
    expect(() => createAdapter(config(join(folder, "missing")), "http://127.0.0.1:9", silent)).toThrow(/ENOENT/);
    writeFileSync(join(folder, "malformed"), "ok=sk-file-1\nsk-file-1\n");
    expect(() => createAdapter(config(join(folder, "malformed")), "http://127.0.0.1:9", silent)).toThrow(/ADAPTER_API_KEYS_FILE \(.*malformed\): entry 2 repeats the key of entry 1$/);
  });
});
