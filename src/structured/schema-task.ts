import type { SchemaProblem } from "./schema-bounds.js";
import { SchemaValidation, type SchemaValidationOptions, type SchemaVerdict } from "./schema-validator.js";
import type { SchemaNode } from "./schema-walk.js";

/** One piece of schema work sent to a worker: a schema to check, or an answer to validate against one. */
export type SchemaTask = { op: "check"; schema: SchemaNode } | { op: "validate"; schema: SchemaNode; value: unknown };

/** What a worker answers a task with: the check's problem (or null), or the validation's verdict. */
export type SchemaTaskResult = SchemaProblem | null | SchemaVerdict;

/** The work of one schema worker thread: its own `SchemaValidation`, whose cache lives as long as the thread. */
export function schemaWorker(options: SchemaValidationOptions): (task: SchemaTask) => SchemaTaskResult {
  const validation = new SchemaValidation(options);
  return (task) => (task.op === "check" ? validation.check(task.schema) : validation.validate(task.schema, task.value));
}
