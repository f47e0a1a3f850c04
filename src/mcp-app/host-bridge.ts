/**
 * The view's side of the MCP Apps bridge (extension `io.modelcontextprotocol/ui`, revision
 * 2026-01-26): JSON-RPC 2.0 over `postMessage` with the host, and nothing else — no network, no
 * host-specific global. Small enough to write here rather than bundle the SDK's `App` (about
 * 650 KB with its dependencies); the tests drive it with the SDK's own `AppBridge`.
 */

/** A JSON-RPC error the host answered a request with. */
export class HostError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

type Params = Record<string, unknown>;

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/** How long a request to the host may take (a `fetch` through it included). */
const REQUEST_TIMEOUT_MS = 60_000;

/** The bridge to the host window: requests, notifications, and the host's own requests and notifications. */
export class HostBridge {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly notificationHandlers = new Map<string, (params: Params) => void>();
  private readonly requestHandlers = new Map<string, (params: Params) => Params>();

  /** Listens on `view` for messages from `host` (its parent) only. */
  constructor(
    private readonly host: Window,
    view: Window,
  ) {
    view.addEventListener("message", (event: MessageEvent) => {
      if (event.source === this.host) this.receive(event.data);
    });
  }

  /** Sends a request; resolves with its result, rejects with the host's error (or after a timeout). */
  request(method: string, params: Params): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new HostError(`The host did not answer ${method}`, -32001));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      this.host.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
    });
  }

  /** Sends a notification. */
  notify(method: string, params: Params = {}): void {
    this.host.postMessage({ jsonrpc: "2.0", method, params }, "*");
  }

  /** Handles a notification from the host. */
  on(method: string, handler: (params: Params) => void): void {
    this.notificationHandlers.set(method, handler);
  }

  /** Answers a request from the host. */
  handle(method: string, handler: (params: Params) => Params): void {
    this.requestHandlers.set(method, handler);
  }

  private receive(data: unknown): void {
    if (!isObject(data) || data.jsonrpc !== "2.0") return;
    const { id, method } = data;
    const params = isObject(data.params) ? data.params : {};
    if (typeof method === "string") {
      if (id === undefined) {
        this.notificationHandlers.get(method)?.(params);
        return;
      }
      const handler = this.requestHandlers.get(method);
      const answer = handler ? { result: handler(params) } : { error: { code: -32601, message: `Method not found: ${method}` } };
      this.host.postMessage({ jsonrpc: "2.0", id, ...answer }, "*");
      return;
    }
    if (typeof id !== "number") return;
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    clearTimeout(pending.timer);
    if (isObject(data.error)) {
      const message = typeof data.error.message === "string" ? data.error.message : "The host refused the request";
      pending.reject(new HostError(message, typeof data.error.code === "number" ? data.error.code : -32603));
    } else {
      pending.resolve(data.result);
    }
  }
}

/** A plain object (what JSON-RPC messages and their parts are). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
