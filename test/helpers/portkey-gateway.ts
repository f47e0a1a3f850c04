import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Portkey's open-source AI gateway (`@portkey-ai/gateway`, a devDependency) running in front of the adapter. */
export interface PortkeyGateway {
  /** Its base URL on loopback (`http://127.0.0.1:<port>`); OpenAI's routes are under `/v1`. */
  url: string;
  /** What it wrote to stderr (its errors: `tryTargetsRecursively error: …`). */
  errors(): string;
  stop(): Promise<void>;
}

/**
 * Starts the gateway as its `npx @portkey-ai/gateway` does (its built start script, `--headless`:
 * no console page), bound to loopback on a free port (test/helpers/portkey-loopback.mjs). It needs
 * nothing from the network: no account, no key of its own; a request names its provider and the
 * host to send it to in `x-portkey-*` headers (`portkeyHeaders`).
 */
export async function startPortkey(): Promise<PortkeyGateway> {
  const require = createRequire(import.meta.url);
  const script = join(dirname(require.resolve("@portkey-ai/gateway/package.json")), "build/start-server.js");
  const hook = join(dirname(fileURLToPath(import.meta.url)), "portkey-loopback.mjs");
  const child: ChildProcess = spawn(process.execPath, ["--import", hook, script, "--headless"], {
    env: { ...process.env, NODE_ENV: "test" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let errors = "";
  child.stderr?.on("data", (chunk: Buffer) => (errors += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /PORTKEY_LISTENING (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`the Portkey gateway exited with ${code}: ${errors}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    errors: () => errors,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/**
 * The headers that send a request through the gateway to the adapter: OpenAI's wire (`openai`
 * provider) at `adapterUrl`, and the client headers to pass on (Portkey forwards none of them
 * unless named in `x-portkey-forward-headers`).
 */
export function portkeyHeaders(adapterUrl: string, forward: readonly string[] = []): Record<string, string> {
  return {
    "x-portkey-provider": "openai",
    "x-portkey-custom-host": `${adapterUrl}/v1`,
    ...(forward.length > 0 ? { "x-portkey-forward-headers": forward.join(",") } : {}),
  };
}
