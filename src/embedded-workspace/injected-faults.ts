import type { Response } from "express";

/** An HTTP-level fault to inject, for tests of the adapter's upstream handling. */
export interface InjectedFault {
  on: "create" | "list" | "health" | "workspaces";
  /** `status`: answer that status with `{detail}`; `broken-body`: a 200 cut mid-JSON; `wrong-shape`: a 200 of another shape; `hang`: never answer; `drop-after-create`: create the query, then cut the connection. */
  kind: "status" | "broken-body" | "wrong-shape" | "hang" | "drop-after-create";
  status?: number;
  retryAfter?: string;
  /** How many calls it affects (default 1). */
  times?: number;
}

/** The faults a test injected into one embedded workspace, each used up by the calls it affects. */
export class InjectedFaults {
  private readonly faults: InjectedFault[] = [];

  inject(fault: InjectedFault): void {
    this.faults.push({ ...fault });
  }

  clear(): void {
    this.faults.splice(0);
  }

  /** The next fault for a call of `on`, counted as used; null when none is waiting. */
  take(on: InjectedFault["on"]): InjectedFault | null {
    const index = this.faults.findIndex((fault) => fault.on === on);
    if (index < 0) return null;
    const fault = this.faults[index] as InjectedFault;
    fault.times = (fault.times ?? 1) - 1;
    if (fault.times <= 0) this.faults.splice(index, 1);
    return fault;
  }

  /** Answers a call of `on` with its fault, if one is waiting: true when the response is the fault's. */
  answer(on: InjectedFault["on"], response: Response): boolean {
    const fault = this.take(on);
    return fault ? respondWithFault(fault, response) : false;
  }
}

/** Answers with the fault (true), or leaves the response to the call (false: a fault that acts later, `drop-after-create`). */
export function respondWithFault(fault: InjectedFault, response: Response): boolean {
  switch (fault.kind) {
    case "status":
      if (fault.retryAfter) response.setHeader("retry-after", fault.retryAfter);
      response.status(fault.status ?? 500).json({ detail: `Injected fault: status ${fault.status ?? 500}` });
      return true;
    case "broken-body":
      response.status(200).type("application/json").end('{"data": [{"id": "');
      return true;
    case "wrong-shape":
      response.status(200).json({ unexpected: true });
      return true;
    case "hang":
      return true;
    default:
      return false;
  }
}
