import type { KeyEntry } from "../config/key-lists.js";
import { credentialHash } from "./credential-hash.js";

/** A key the deployment lists: a client's or a gateway's, with its name when it has one. */
export interface ListedKey {
  kind: "client" | "gateway";
  name: string | undefined;
}

/** The keys of one deployment (docs/governance.md#named-keys). */
export interface KeyRingSettings {
  clientKeys: readonly KeyEntry[];
  gatewayKeys: readonly KeyEntry[];
  /**
   * Keys that are not clients' (the admins', the metrics scraper's): a file naming one is refused,
   * and a request presenting one is never answered nor sent upstream (`isReserved`).
   */
  reserved?: readonly KeyEntry[];
  /** Whether a file of keys is configured: keys are then listed even while it holds none. */
  file: boolean;
}

/**
 * The client and gateway keys a deployment accepts: those of the environment, and those of
 * `ADAPTER_API_KEYS_FILE` as last read (replaced whole when it changes). Looked up by the
 * credential's SHA-256 hash, so a key is never held or compared in clear: a lookup's timing could
 * only tell about a hash, which gives nothing of a key. Owned by the adapter; nothing module-wide.
 */
export class KeyRing {
  private readonly fixed = new Map<string, ListedKey>();
  private readonly reserved: ReadonlySet<string>;
  private fromFile = new Map<string, ListedKey>();

  constructor(private readonly settings: KeyRingSettings) {
    for (const entry of settings.clientKeys) this.fixed.set(credentialHash(entry.key), { kind: "client", name: entry.name });
    for (const entry of settings.gatewayKeys) this.fixed.set(credentialHash(entry.key), { kind: "gateway", name: entry.name });
    this.reserved = new Set((settings.reserved ?? []).map((entry) => credentialHash(entry.key)));
  }

  /** Whether keys are listed: then a credential not among them is refused. */
  get listing(): boolean {
    return this.fixed.size > 0 || this.settings.file;
  }

  /** Whether `hash` is an admin's or the metrics scraper's key: refused at every answer route, never sent upstream. */
  isReserved(hash: string): boolean {
    return this.reserved.has(hash);
  }

  /** The listed key whose hash is `hash`, if any. */
  find(hash: string): ListedKey | undefined {
    return this.fixed.get(hash) ?? this.fromFile.get(hash);
  }

  /**
   * Replaces the file's keys with `entries`, unless one of them is a gateway's or an admin's key,
   * or a client key's name is a gateway's: then nothing changes and the problems are returned.
   */
  replaceFileKeys(entries: readonly KeyEntry[]): string[] {
    const gatewayNames = new Set(this.settings.gatewayKeys.map((entry) => entry.name).filter(Boolean));
    const problems: string[] = [];
    const next = new Map<string, ListedKey>();
    entries.forEach((entry, index) => {
      const hash = credentialHash(entry.key);
      const fixed = this.fixed.get(hash);
      if (this.reserved.has(hash) || fixed?.kind === "gateway") problems.push(`entry ${index + 1}: a gateway's or an admin's key cannot be a client key`);
      else if (entry.name !== undefined && gatewayNames.has(entry.name)) problems.push(`entry ${index + 1}: its name is a gateway's`);
      else next.set(hash, { kind: "client", name: entry.name });
    });
    if (problems.length === 0) this.fromFile = next;
    return problems;
  }

  /** How many keys the file gave. */
  get fileKeys(): number {
    return this.fromFile.size;
  }
}
