import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { projectRoot } from "../../src/util/package-info.js";

/** A replica: the compiled entry point in a process of its own, as a deployment runs it. */
export interface Replica {
  child: ChildProcess;
  url: string;
  /** Everything it wrote so far, standard output and error together (its log lines, as JSON with `LOG_FORMAT=json`). */
  output(): string;
}

/** Starts a replica in front of `upstream` on a free port; `environment` adds to (or overrides) the test defaults. */
export async function startReplica(upstream: string, environment: Record<string, string>): Promise<Replica> {
  const child = spawn(process.execPath, [join(projectRoot(), "dist/src/main.js")], {
    env: { ...process.env, WORKSPACE_BASE_URL: upstream, PORT: "0", LOG_LEVEL: "warn", LOG_FORMAT: "json", ...environment },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
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

/** Kills every replica still running (SIGKILL) and waits for each to exit. */
export async function stopAll(replicas: Replica[]): Promise<void> {
  await Promise.all(
    replicas.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGKILL");
        }),
    ),
  );
}
