import { Redis, type RedisOptions } from "ioredis";
import { type Clock, systemClock } from "../util/clock.js";

/**
 * A Redis connection that is opened again whenever it ends without the adapter having closed it
 * (docs/scale-out.md#in-a-failover). ioredis gives a connection up for good (`end`) when its
 * connector fails in the middle of connecting, and with Sentinel's failover detector on that
 * happens in a plain failover: after the master dies the client asks a sentinel for the master
 * again and again, and when the sentinels announce the promotion (`+switch-master`) during one of
 * those lookups, the detector of the connection that died closes the connector under the lookup.
 * The replicas then sent Redis nothing until they were restarted (seen in the Sentinel test, all
 * three at once). Closing is `disconnect()`; after it nothing is reopened.
 */
export class ReopeningRedis extends Redis {
  private closing = false;

  constructor(
    options: Omit<RedisOptions, "replyMapping">,
    reopenMs: number,
    clock: Pick<Clock, "setTimeout"> = systemClock,
  ) {
    super(options);
    this.on("end", () => {
      if (this.closing) return;
      clock.setTimeout(() => {
        if (!this.closing && this.status === "end") this.connect().catch(() => undefined);
      }, reopenMs);
    });
  }

  override disconnect(reconnect = false): void {
    if (!reconnect) this.closing = true;
    super.disconnect(reconnect);
  }
}
