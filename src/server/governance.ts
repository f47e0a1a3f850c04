import type { Logger } from "pino";
import { labelWithoutNames } from "../auth/account.js";
import { adminCheck, type AdminCheck } from "../auth/admin-keys.js";
import { type Authenticator, createAuthenticator } from "../auth/authenticate.js";
import { type KeyFileWatch, watchKeyFile } from "../auth/key-file.js";
import { credentialHash } from "../auth/credential-hash.js";
import { KeyRing } from "../auth/key-ring.js";
import { openAuditSink } from "../audit/audit-sink.js";
import type { AuthSettings, Config, GovernanceSettings } from "../config/config.js";
import { auditTrail } from "../http/audit-trail.js";
import type { RequestSubscriber } from "../http/request-contexts.js";
import type { Metrics } from "../metrics/metrics.js";
import { UsageLedger } from "../usage/usage-ledger.js";
import type { UsageStore } from "../usage/usage-store.js";
import type { Clock } from "../util/clock.js";
import type { Ids } from "../util/ids.js";

/** Who asks, as `keyAuthentication` settles it. */
export interface KeyAuthentication {
  authenticate: Authenticator;
  /** The watch of `ADAPTER_API_KEYS_FILE`, when one is configured. */
  keyFile: KeyFileWatch | undefined;
  /** Whether client keys are listed: only they are accepted (and `/documents` asks for one, or a signed link). */
  listing: boolean;
  /** Whether a key is an admin's or the metrics scraper's: never a workspace key (the OAuth consent page refuses it too). */
  reservedKey: (key: string) => boolean;
}

/**
 * Who asks (docs/governance.md#who-asks): the authenticator over the listed keys, and the watch of
 * their file. The admins' and the scraper's keys are reserved: refused wherever a client's key is
 * taken, never sent upstream.
 */
export function keyAuthentication(auth: AuthSettings, logger: Logger, metricsKey?: string): KeyAuthentication {
  const file = auth.clientKeysFile;
  const reserved = [...auth.adminKeys, ...(metricsKey === undefined ? [] : [{ name: undefined, key: metricsKey }])];
  const keys = new KeyRing({ ...auth, reserved, file: file !== undefined });
  const keyFile = file ? watchKeyFile(file, keys, logger) : undefined;
  const { identityHeaders, workspaceApiKey } = auth;
  const authenticate = createAuthenticator({ workspaceApiKey, keys, identityHeaders });
  return { authenticate, keyFile, listing: keys.listing, reservedKey: (key) => keys.isReserved(credentialHash(key)) };
}

/** The audit trail of `AUDIT_LOG` (docs/governance.md#the-audit-trail): the request subscriber that writes it, and its sink's close. */
export function auditOf(
  settings: GovernanceSettings["audit"],
  parts: { clock: Clock; logger: Logger; metrics: Metrics; version: string },
): { subscriber: RequestSubscriber; close: () => Promise<void> } | undefined {
  if (!settings) return undefined;
  const { logger, metrics } = parts;
  const onError = (message: string) => logger.error({ err: { message } }, "the audit trail cannot be written");
  const sink = openAuditSink(settings.sink, { serviceVersion: parts.version, onError });
  logger.info({ audit: settings.sink.kind, content: settings.content }, "audit trail on");
  const onRecord = (outcome: "written" | "dropped") => metrics.auditRecords.inc({ outcome });
  const subscriber = auditTrail({ sink, content: settings.content, clock: parts.clock, onRecord });
  return { subscriber, close: () => sink.close() };
}

/** Usage counting's parts: the ledger the runner charges and the usage endpoint's guard, and their close. */
export interface UsageParts {
  /** The ledger and the usage endpoint's guard, when usage is counted. */
  endpoint: { ledger: UsageLedger; admin: AdminCheck } | undefined;
  close(): Promise<void>;
}

/**
 * Usage counting (docs/governance.md#usage), into the store the backend gives (Redis day buckets
 * the replicas share, or memory), counted in Prometheus by label (named keys, the rest folded);
 * off, nothing is built and answers are charged as before.
 */
export function usageOf(
  config: Pick<Config, "governance" | "auth" | "metrics">,
  parts: {
    store: (retentionDays: number) => UsageStore;
    clock: Clock;
    ids: Pick<Ids, "charge">;
    logger: Logger;
    metrics: Metrics;
    wake?: (() => Promise<void>) | undefined;
  },
): UsageParts {
  const { governance } = config;
  if (!governance.usage) return { endpoint: undefined, close: async () => undefined };
  const { metrics } = parts;
  // docs/observability.md#metrics: key names in labels only where the operator allows it.
  const labelOf = config.metrics.keyNames ? (label: string) => label : labelWithoutNames;
  const ledger = new UsageLedger({
    store: parts.store(governance.usage.retentionDays),
    clock: parts.clock,
    newId: () => parts.ids.charge(),
    logger: parts.logger,
    wake: parts.wake,
    events: {
      onCharged: (label, charge) => metrics.charged(labelOf(label), charge.workspace, charge.mode, charge),
      onWritten: (outcome) => metrics.usageWrites.inc({ outcome }),
    },
  });
  return { endpoint: { ledger, admin: adminCheck(config.auth.adminKeys) }, close: () => ledger.close() };
}
