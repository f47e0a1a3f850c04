import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = join(dirname(fileURLToPath(import.meta.url)), "../../src");
/** The one module allowed to spell Redis key names. */
const KEYS_MODULE = "redis/keys.ts";

/**
 * Ways of building a Redis key by hand: a hash tag (`{${…}`), the deployment's prefix interpolated before a name,
 * a key segment of ours next to an interpolation or a quote, or one of our suffixes ending a string.
 */
const KEY_BUILDING: RegExp[] = [
  /\{\$\{/,
  /\$\{(?:[\w.]*\.)?(?:prefix|keyPrefix|redisKeyPrefix)\}(?:[\w-]*[:`]|\{)/,
  /(?:conversations|conversation|response-item|response|limit|background|oauth|usage):(?:\$\{|["'`])/,
  /:(?:lease|waiting|snapshots|slots|rpm|tpm)["'`]/,
];

/** The code of a file without its comments (doc comments may show what a key looks like). */
function codeOf(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/^\s*(?:\/\/|\/\*|\*)/.test(line))
    .map((line) => line.replace(/\s\/\/.*$/, ""))
    .join("\n");
}

function offenders(code: string): string[] {
  return code.split("\n").filter((line) => KEY_BUILDING.some((pattern) => pattern.test(line)));
}

describe("Redis key names", () => {
  it("recognises the hand-built keys the code used to have", () => {
    const before = [
      "redis.get(`${this.prefix}response:${id}`)",
      "redis.get(`${this.prefix}response-item:${itemId}`)",
      "new RedisConversationStore(redis, `${config.redisKeyPrefix}conversation:`)",
      "private readonly namespace = \"workspace-openai-adapter:conversation:\",",
      "const tagged = `${this.options.prefix}{${group}}:`;",
      "return { lease: `${tagged}lease`, waiting: `${tagged}waiting`, channel: `${tagged}snapshots` };",
      "const key = `{${principal}:${workspace}}`;",
      "keyPrefix: `${options.prefix}limit`,",
      "return `${this.options.prefix}limit:${key}:slots`;",
      "consume(`${key}:rpm`, 1)",
      "new RedisConversationItems(redis, (id, part) => `${config.redisKeyPrefix}conversations:{${id}}:${part}`, 100)",
    ];
    // The lease line names its suffixes after `${tagged}`: caught by the prefix line above it.
    expect(before.filter((line) => offenders(line).length === 0)).toEqual([
      "return { lease: `${tagged}lease`, waiting: `${tagged}waiting`, channel: `${tagged}snapshots` };",
    ]);
  });

  it("are built in src/redis/keys.ts only", () => {
    const files = readdirSync(src, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile() && entry.name.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const entry of files) {
      const file = relative(src, join(entry.parentPath, entry.name));
      if (file === KEYS_MODULE) continue;
      for (const line of offenders(codeOf(readFileSync(join(src, file), "utf8")))) found.push(`${file}: ${line.trim()}`);
    }
    expect(found).toEqual([]);
  });

  it("are not confused with other uses of a prefix (an id's)", () => {
    expect(offenders("export const newOpenAIId = (prefix: string) => `${prefix}_${randomBytes(24).toString(\"hex\")}`;")).toEqual([]);
  });

  it("are built in src/redis/keys.ts, which the check sees", () => {
    expect(offenders(codeOf(readFileSync(join(src, KEYS_MODULE), "utf8"))).length).toBeGreaterThan(5);
  });
});
