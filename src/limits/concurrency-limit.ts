import { RateLimitError } from "../errors/adapter-error.js";

/**
 * Caps requests in flight, in all and per workspace. Beyond a cap the answer is a fast 429 with
 * `Retry-After`, never a queue that grows without bound while the upstream is slow.
 */
export class ConcurrencyLimit {
  private total = 0;
  private readonly byWorkspace = new Map<string, number>();

  constructor(
    private readonly maxTotal: number,
    private readonly maxPerWorkspace: number,
  ) {}

  /** Takes a slot for one request; call the returned function exactly once when it ends. */
  acquire(workspace: string): () => void {
    const inWorkspace = this.byWorkspace.get(workspace) ?? 0;
    if (this.total >= this.maxTotal) {
      throw new RateLimitError(`The adapter is at its limit of ${this.maxTotal} requests in flight; retry shortly`, {
        headers: { "retry-after": "1" },
        code: "concurrency_limit",
      });
    }
    if (inWorkspace >= this.maxPerWorkspace) {
      throw new RateLimitError(
        `Workspace '${workspace}' is at its limit of ${this.maxPerWorkspace} requests in flight; retry shortly`,
        { headers: { "retry-after": "1" }, code: "concurrency_limit" },
      );
    }
    this.total += 1;
    this.byWorkspace.set(workspace, inWorkspace + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.byWorkspace.get(workspace) ?? 1) - 1;
      if (left === 0) this.byWorkspace.delete(workspace);
      else this.byWorkspace.set(workspace, left);
    };
  }

  /** Requests in flight now. */
  get inFlight(): number {
    return this.total;
  }
}
