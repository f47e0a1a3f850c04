import { type FSWatcher, statSync, watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { DOCUMENT_FILE } from "./document-index.js";

/**
 * Watches the embedded workspace's documents (folders recursively, single files through their
 * folder) and calls `changed` once things settle after a change to a document: a burst of events
 * (an editor saving, a copy of many files) makes one call. Returns how to stop watching; no
 * watcher or timer outlives it.
 */
export function watchDocuments(paths: readonly string[], changed: (files: string[]) => void, settleMs = 150): () => void {
  const watchers: FSWatcher[] = [];
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const note = (file: string) => {
    if (!DOCUMENT_FILE.test(file) || file.includes("node_modules")) return;
    pending.add(file);
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      const files = [...pending];
      pending.clear();
      changed(files);
    }, settleMs);
  };
  for (const path of paths) {
    const full = resolve(path);
    let folder = false;
    try {
      folder = statSync(full).isDirectory();
    } catch {
      continue;
    }
    const target = folder ? full : dirname(full);
    const watcher = watch(target, { recursive: folder }, (_event, name) => {
      if (!name) return;
      const file = resolve(target, name.toString());
      if (folder || basename(file) === basename(full)) note(file);
    });
    watcher.on("error", () => undefined);
    watchers.push(watcher);
  }
  return () => {
    clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
  };
}
