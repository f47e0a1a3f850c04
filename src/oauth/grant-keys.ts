import type { OAuthStorage } from "./oauth-storage.js";
import type { SecretBox } from "./secret-box.js";

/** What a grant stands for upstream: the workspace key given at consent, and the workspace picked. */
export interface GrantKey {
  key: string;
  workspace: string;
  /** Who the grant is for, hashed (the team set-up: the person signed in); unset: the key's own hash. */
  principal?: string | undefined;
}

/**
 * The workspace key behind each grant, stored sealed together with its workspace and principal
 * (AES-256-GCM under a key derived from `OAUTH_SECRET`, bound to the grant id: whoever can write to
 * the store cannot re-point a grant at another workspace); it lives as long as the grant and goes
 * when the grant is revoked.
 */
export class GrantKeys {
  constructor(
    private readonly storage: OAuthStorage,
    private readonly box: SecretBox,
    private readonly ttlSeconds: number,
  ) {}

  private static keyOf(grantId: string): string {
    return `grant-key:${grantId}`;
  }

  async put(grantId: string, grant: GrantKey): Promise<void> {
    const record = { sealed: this.box.seal(JSON.stringify(grant), grantId) };
    await this.storage.set(GrantKeys.keyOf(grantId), JSON.stringify(record), this.ttlSeconds);
  }

  /** The grant's key and workspace, or undefined (revoked, expired, or sealed under another secret). */
  async get(grantId: string): Promise<GrantKey | undefined> {
    const text = await this.storage.get(GrantKeys.keyOf(grantId));
    if (text === undefined) return undefined;
    const record = JSON.parse(text) as { sealed: string };
    const opened = this.box.open(record.sealed, grantId);
    return opened === undefined ? undefined : (JSON.parse(opened) as GrantKey);
  }

  async delete(grantId: string): Promise<void> {
    await this.storage.delete([GrantKeys.keyOf(grantId)]);
  }
}
