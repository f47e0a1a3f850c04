import type { HostPolicy } from "../upstream/realtime/allowed-hosts.js";
import type { Exchange, Outgoing, Transport } from "../upstream/transport.js";
import type { Caller, WorkspaceClient } from "../upstream/workspace-client.js";
import type { CheckSettings } from "./check-settings.js";

/**
 * What every probe works with (docs/check.md#what-it-checks): the adapter's own workspace client
 * and transport pointed at the service (or at the recording tap in front of it), the settings,
 * and the ways to tell a person what is happening.
 */
export interface ProbeContext {
  settings: CheckSettings;
  /** The base URL the probes call: the service's, or the recording tap's. */
  upstreamUrl: string;
  client: WorkspaceClient;
  /** The client's transport, for the calls the client has no method for (`/health` in detail, a request without a header). */
  transport: Transport;
  /** A key made up for this run, to see the service refuse it. */
  madeUpKey: string;
  /** The `ws_url`s the probes may follow: the adapter's rule (REALTIME_ALLOWED_HOSTS), and the tap's own address when recording. */
  realtimePolicy: HostPolicy;
  /** Milliseconds, for timings. */
  now(): number;
  /** Tells the person running it what is about to happen (stderr). */
  note(text: string): void;
  /** Labels the exchanges that follow in the recording with the check making them. */
  phase(name: string): void;
}

/** The caller of the run: the key and workspace being checked. */
export function callerOf(context: ProbeContext): Caller {
  return { credential: context.settings.apiKey, workspace: context.settings.workspace ?? "" };
}

/** One raw call through the adapter's transport, with the key (or `credential`) and, unless told not to, the workspace header. */
export function sendRaw(
  context: ProbeContext,
  request: {
    method: Outgoing["method"];
    path: string;
    search?: URLSearchParams;
    body?: unknown;
    /** Another credential than the checked key; null for none. */
    credential?: string | null;
    /** False to leave out `Service-Workspace`. */
    workspace?: boolean;
  },
): Promise<Exchange> {
  const headers: Record<string, string> = { accept: "application/json", "user-agent": "workspace-openai-adapter check" };
  const credential = request.credential === undefined ? context.settings.apiKey : request.credential;
  if (credential !== null) headers.authorization = `Bearer ${credential}`;
  if (request.workspace !== false && context.settings.workspace) headers["service-workspace"] = context.settings.workspace;
  if (request.body !== undefined) headers["content-type"] = "application/json";
  return context.transport.send(
    {
      method: request.method,
      path: request.path,
      search: request.search,
      headers,
      body: request.body === undefined ? null : JSON.stringify(request.body),
    },
    undefined,
  );
}

/** A body's JSON, or undefined when it is not JSON. */
export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
