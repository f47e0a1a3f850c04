import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../src/embedded-workspace/start-embedded-workspace.js";
import { projectRoot } from "../../src/util/package-info.js";
import { type RedisServer, startRedis } from "./redis-server.js";
import { API_KEY, FIXTURE_DOCUMENTS } from "./start-stack.js";

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

/** Replica processes sharing one real redis-server, in front of an embedded workspace of the fixture documents (workspace `acme`). */
export interface ReplicasOnRedis {
  redis: RedisServer;
  workspace: RunningWorkspace;
  replicas: Replica[];
  /** Stops the replicas, the workspace and Redis. */
  stop(): Promise<void>;
}

/** Starts `count` replicas on one Redis (under `environment`'s key prefix), the workspace's steps `stepDelayMs` apart. */
export async function replicasOnRedis(count: number, stepDelayMs: number, environment: (redisUrl: string) => Record<string, string>): Promise<ReplicasOnRedis> {
  const redis = await startRedis();
  const workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs });
  const replicas = await Promise.all(Array.from({ length: count }, () => startReplica(workspace.url, environment(redis.url))));
  return {
    redis,
    workspace,
    replicas,
    async stop() {
      await stopAll(replicas);
      await workspace.close();
      await redis.stop();
    },
  };
}
