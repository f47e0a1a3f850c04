/**
 * Makes `String.prototype` a fast-properties object again, which V8 leaves slow after a module
 * subclasses `String` and no instance is ever written to.
 *
 * When an object is given a built-in prototype, V8 turns that prototype into a dictionary. It makes
 * it fast again only when a property is stored through an object that inherits from it. ioredis
 * declares `class VerbatimString extends String` as it loads, and builds one only when a RESP3
 * server sends a verbatim string, so after the import `String.prototype` stays a dictionary.
 * Optimized code then looks up every string method (`charCodeAt`, `slice`, `indexOf`, ...) through
 * a generic IC call:
 * - a `charCodeAt` loop runs 4× slower;
 * - encoding a chat completion's spans takes 17 µs instead of 8.
 *
 * docs/benchmarks.md#what-shaped-these-numbers has the measurements. One store through a throwaway
 * object that inherits from `String.prototype` makes it fast again, and it then stays fast when more
 * classes inherit from it. Calling this again is harmless. Only V8's representation changes, never
 * what any string method does.
 */
export function keepStringMethodsFast(): void {
  const heir = Object.create(String.prototype) as { probe?: number };
  heir.probe = 1;
}
