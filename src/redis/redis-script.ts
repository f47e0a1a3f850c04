import { createHash } from "node:crypto";
import type { RedisClient } from "./redis-connection.js";

/** Whether Redis refused a script by its digest because it does not hold it (a restarted or failed-over node). */
function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("NOSCRIPT");
}

/**
 * A Lua script sent by its SHA-1 digest (EVALSHA), and whole only when the node does not hold it
 * yet (NOSCRIPT): what ioredis's `defineCommand` does for the limits' scripts, without a command
 * added to the client's type. The one way the stores and the poll sharing run a script.
 */
export class RedisScript {
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash("sha1").update(lua).digest("hex");
  }

  /** Runs the script on `client` with its keys (all in one slot) and arguments. */
  async run(client: RedisClient, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return client.eval(this.lua, keys.length, ...keys, ...args);
    }
  }
}
