import { workerData } from "piscina";
import { schemaWorker } from "./schema-task.js";
import type { SchemaValidationOptions } from "./schema-validator.js";

// A schema worker thread's entry point, as piscina loads it (schema-worker-pool.ts): the options
// come from the pool, the cache of checked schemas lives as long as the thread.
export default schemaWorker(workerData as SchemaValidationOptions);
