import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { errorMessage } from "../util/error-message.js";
import type { SchemaProblem } from "./schema-bounds.js";
import { inProcessSchemas, type SchemaService } from "./schema-service.js";
import type { SchemaTask, SchemaTaskResult } from "./schema-task.js";
import type { SchemaValidationOptions, SchemaVerdict } from "./schema-validator.js";

/** The limits of the schema worker: what one task may take before it is stopped, and the thread's memory. */
export interface SchemaWorkerLimits {
  /** Longest a check or a validation may take, waiting included; past it the worker is stopped and started again. */
  taskTimeoutMs: number;
  /** The worker's heap; a schema or answer that needs more ends the worker, not the adapter. */
  heapMb: number;
  /** Most tasks waiting for the worker besides the one it runs; past it a request's schema is refused as busy (a 503). */
  maxQueue: number;
}

/** The worker's defaults: checks take tens of milliseconds at most (docs/benchmarks.md), the cache 64 MB. */
export const SCHEMA_WORKER_LIMITS: SchemaWorkerLimits = { taskTimeoutMs: 5_000, heapMb: 256, maxQueue: 64 };

/**
 * The schemas checked and answers validated on a worker thread of their own (piscina, one thread,
 * started on the first schema): whatever a caller's schema costs, the event loop that serves every
 * other request only copies the schema across (docs/structured-answers.md#the-schema-is-untrusted).
 * A task past `taskTimeoutMs`, or a schema that exhausts the worker's heap, ends that worker (the
 * pool starts another, with an empty cache) and is refused: the check as a problem the route
 * answers with a 400 naming the parameter, the validation as an answer that cannot be checked.
 */
export function workerSchemas(
  options: SchemaValidationOptions,
  limits: SchemaWorkerLimits = SCHEMA_WORKER_LIMITS,
  filename = WORKER_FILE,
): SchemaService {
  let pool: Piscina<SchemaTask, SchemaTaskResult> | undefined;
  // Tasks given to the pool and not ended: piscina's own `maxQueue` bounds nothing here (its balancer
  // hands the busy worker more tasks rather than queueing them), so the bound is counted here.
  let inFlight = 0;
  const run = async (task: SchemaTask): Promise<SchemaTaskResult> => {
    if (inFlight > limits.maxQueue) throw new QueueFull();
    pool ??= new Piscina({
      filename,
      minThreads: 1,
      maxThreads: 1,
      // The worker waits for tasks on its event loop, not in Atomics.wait: 5 µs less of the adapter's loop per task, measured.
      atomics: "disabled",
      workerData: options,
      resourceLimits: { maxOldGenerationSizeMb: limits.heapMb },
    });
    // A plain timer: `AbortSignal.timeout` cost 14 µs of the event loop per task here, this about 2.
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), limits.taskTimeoutMs);
    inFlight += 1;
    try {
      return await pool.run(task, { signal: stop.signal });
    } finally {
      inFlight -= 1;
      clearTimeout(timer);
    }
  };
  const failure = (error: unknown): string => {
    const name = error instanceof Error ? error.name : "";
    if (name === "AbortError") return `took longer than ${limits.taskTimeoutMs} ms`;
    if ((error as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY") return `needs more than ${limits.heapMb} MB`;
    return `stopped the checking thread (${errorMessage(error)})`;
  };
  return {
    check: async (schema) => {
      try {
        return (await run({ op: "check", schema })) as SchemaProblem | null;
      } catch (error) {
        if (error instanceof QueueFull) return { pointer: "", message: BUSY, busy: true };
        return { pointer: "", message: `is too costly to check: checking it ${failure(error)}` };
      }
    },
    validate: async (schema, value) => {
      try {
        return (await run({ op: "validate", schema, value })) as SchemaVerdict;
      } catch (error) {
        const why = error instanceof QueueFull ? BUSY : `the answer cannot be checked against this schema: checking it ${failure(error)}`;
        return { valid: false, pointer: "", message: why, repairable: false };
      }
    },
    close: async () => {
      await pool?.close({ force: true });
    },
  };
}

/** What a full queue of the worker is told as. */
const BUSY = "The adapter is busy checking other schemas; try again shortly.";

/** The refusal of a task past the queue's bound, told apart from the worker's own failures. */
class QueueFull extends Error {}

/** The compiled worker beside this module (dist/src/structured/schema-worker.js). */
const WORKER_FILE = fileURLToPath(new URL("./schema-worker.js", import.meta.url));

/**
 * The adapter's schemas: on the worker when the adapter runs compiled (`npm start`), on the calling
 * thread when it runs from its TypeScript source (the unit tests: there is no compiled worker to
 * start). A compiled adapter without its worker file is a broken build, and says so at start.
 */
export function adapterSchemas(options: SchemaValidationOptions): SchemaService {
  if (import.meta.url.endsWith(".ts")) return inProcessSchemas(options);
  if (!existsSync(WORKER_FILE)) throw new Error(`The schema worker ${WORKER_FILE} is missing: build the adapter again (npm run build).`);
  return workerSchemas(options);
}
