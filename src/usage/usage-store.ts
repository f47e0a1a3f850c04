/** One answer's usage as it is charged (docs/governance.md#usage): who, where, in which mode and UTC day. */
export interface UsageCharge {
  /** The charge's own id: a store applies a charge once, however often its write is retried. */
  id: string;
  /** The UTC day it was charged on, `2026-11-23`. */
  day: string;
  /** Who asked (`Account.id`): a key's name, a gateway identity, a grant, a bare key's hash prefix. */
  account: string;
  workspace: string;
  mode: string;
  inputTokens: number;
  outputTokens: number;
  /** The reasoning part of `outputTokens`. */
  reasoningTokens: number;
}

/** A day's totals for one account, workspace and mode. */
export interface UsageTotal extends Omit<UsageCharge, "id"> {
  /** Answers charged. */
  answers: number;
}

/**
 * Where usage is kept (docs/governance.md#usage): a total per UTC day, account, workspace and mode,
 * in process or in the Redis the replicas share. One contract, two implementations
 * (test/features/usage/usage-store-contract.test.ts).
 */
export interface UsageStore {
  /**
   * Adds one answer to its day's totals, once: a charge whose id was applied already (a retry of a
   * write that timed out but went through) changes nothing. Rejects when it could not be written
   * (the ledger retries).
   */
  add(charge: UsageCharge): Promise<void>;
  /** Every total of each of `days` (`2026-11-23`). Rejects when they cannot be read: never an empty answer instead. */
  totals(days: readonly string[]): Promise<UsageTotal[]>;
}

/** The fields a total is told apart by, in a store's own keys: tab-separated (no account, workspace or mode holds a tab). */
export function totalField(charge: Pick<UsageCharge, "account" | "workspace" | "mode">): string {
  return `${charge.account}\t${charge.workspace}\t${charge.mode}`;
}
