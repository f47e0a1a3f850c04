import { randomBytes, randomUUID } from "node:crypto";

/**
 * The ids the adapter makes for what it answers, injected like the clock (one `Ids` per adapter,
 * built in `createApp`), so that tests can fix them and every recipe is written once.
 */
export interface Ids {
  /** A new workspace query's id: the adapter chooses it (docs/upstream-assumptions.md), a random UUID. */
  query(): string;
  /** A response's id: `resp_` and 32 hex digits. */
  response(): string;
  /** An OpenAI-style object's id, `<prefix>_` and 48 hex digits (`conv_…`, `msg_…`): nothing in it names the workspace or the key. */
  object(prefix: string): string;
  /** What a local answer (a chat UI's housekeeping) stands on where a query id would be: `local-…`, never sent upstream. */
  local(): string;
  /** This replica's name in background answers' leases: `replica-…`, random per process. */
  replica(): string;
  /** A usage charge's id (a random UUID): what makes a retried write count once (docs/governance.md#usage). */
  charge(): string;
}

/** The ids of a running adapter: random. */
export const randomIds: Ids = {
  query: () => randomUUID(),
  response: () => `resp_${randomUUID().replaceAll("-", "")}`,
  object: (prefix) => `${prefix}_${randomBytes(24).toString("hex")}`,
  local: () => `local-${randomUUID()}`,
  replica: () => `replica-${randomUUID()}`,
  charge: () => randomUUID(),
};
