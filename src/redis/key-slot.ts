/**
 * The Redis Cluster hash slot of a key (the cluster specification's `HASH_SLOT`): CRC16 (XMODEM) of
 * the key's hash tag, the part between the first `{` and the next `}` when that part is not empty,
 * else of the whole key, modulo 16384. Pure: the gate uses it to tell which node answers a command.
 */
export function keySlot(key: string): number {
  const bytes = Buffer.from(key, "utf8");
  const open = bytes.indexOf(0x7b);
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) return crc16(bytes.subarray(open + 1, close)) & 16383;
  }
  return crc16(bytes) & 16383;
}

/**
 * The master of `key`'s slot in a cluster client's slot map (slot → node names, master first), as
 * the client last learnt it; undefined while no owner is known. The gate routes commands by it, the
 * shard subscriber places channels by it.
 */
export function slotMaster(slots: readonly (readonly string[] | undefined)[], key: string): string | undefined {
  return slots[keySlot(key)]?.[0];
}

/** CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), bit by bit: keys are short. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}
