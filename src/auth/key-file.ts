import { type FSWatcher, readFileSync, watch } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname } from "node:path";
import type { Logger } from "pino";
import { parseKeyList } from "../config/key-lists.js";
import type { KeyRing } from "./key-ring.js";
import { errorMessage } from "../util/error-message.js";

/** How long a burst of changes (an editor's save, a Kubernetes secret's swap) settles before the file is read. */
const SETTLE_MS = 50;

/** A key file being watched; `close` stops watching. */
export interface KeyFileWatch {
  close(): void;
  /** Reads the file again now (what a change does): resolves once its keys are in the ring, or refused. */
  reload(): Promise<void>;
}

/**
 * `ADAPTER_API_KEYS_FILE` (docs/governance.md#named-keys): read once at start-up, where a missing
 * or malformed file stops the adapter, then re-read whenever its folder changes (a file rewritten,
 * renamed over, or a Kubernetes secret's `..data` link swapped), without a restart. A file that
 * does not read or parse then keeps the keys from before it, and says so in the log; the log never
 * holds a key.
 */
export function watchKeyFile(path: string, ring: KeyRing, logger: Logger): KeyFileWatch {
  let last = readFileSync(path, "utf8");
  const { entries, problems } = parseKeyList(last);
  problems.push(...ring.replaceFileKeys(entries));
  if (problems.length > 0) throw new Error(`ADAPTER_API_KEYS_FILE (${path}): ${problems.join("; ")}`);
  logger.info({ file: path, keys: ring.fileKeys }, "client keys read from ADAPTER_API_KEYS_FILE");

  const reload = async (): Promise<void> => {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      logger.error({ file: path, err: { message: errorMessage(error) } }, "ADAPTER_API_KEYS_FILE could not be read: the keys read before stay");
      return;
    }
    if (text === last) return;
    const read = parseKeyList(text);
    const refused = read.problems.length > 0 ? read.problems : ring.replaceFileKeys(read.entries);
    if (refused.length > 0) {
      logger.error({ file: path, problems: refused }, "ADAPTER_API_KEYS_FILE does not parse: the keys read before stay");
      return;
    }
    last = text;
    logger.info({ file: path, keys: ring.fileKeys }, "client keys read again from ADAPTER_API_KEYS_FILE");
  };
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  const name = basename(path);
  try {
    watcher = watch(dirname(path), { persistent: false }, (_event, changed) => {
      if (changed !== null && changed !== name && !changed.startsWith("..")) return;
      clearTimeout(timer);
      timer = setTimeout(() => void reload(), SETTLE_MS);
      timer.unref();
    });
    watcher.on("error", (error) => logger.warn({ file: path, err: { message: error.message } }, "ADAPTER_API_KEYS_FILE is no longer watched"));
  } catch (error) {
    logger.warn({ file: path, err: { message: errorMessage(error) } }, "ADAPTER_API_KEYS_FILE cannot be watched: its keys change only with a restart");
  }
  return {
    reload,
    close: () => {
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
