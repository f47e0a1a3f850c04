import type { SchemaProblem } from "./schema-bounds.js";
import { SchemaValidation, type SchemaValidationOptions, type SchemaVerdict } from "./schema-validator.js";
import type { SchemaNode } from "./schema-walk.js";

/**
 * Where the caller's schemas are checked and answers validated against them
 * (docs/structured-answers.md#the-schema-is-untrusted): the routes ask `check` once a request is
 * admitted, the answer core asks `validate` for each turn. Asynchronous so that the work can run
 * off the event loop (`workerSchemas`), where no schema can hold up other requests.
 */
export interface SchemaService {
  /** What is wrong with a caller's schema, or null when it can be used. */
  check(schema: SchemaNode): Promise<SchemaProblem | null>;
  /** Validates an answer's JSON against a schema `check` accepted. */
  validate(schema: SchemaNode, value: unknown): Promise<SchemaVerdict>;
  /** Stops what the service started (its worker threads). */
  close(): Promise<void>;
}

/**
 * The schemas checked on the calling thread: what the adapter runs when built from its TypeScript
 * source (the unit tests, which have no compiled worker to start), and what a worker runs inside.
 */
export function inProcessSchemas(options: SchemaValidationOptions): SchemaService {
  const validation = new SchemaValidation(options);
  return {
    check: (schema) => Promise.resolve(validation.check(schema)),
    validate: (schema, value) => Promise.resolve(validation.validate(schema, value)),
    close: () => Promise.resolve(),
  };
}
