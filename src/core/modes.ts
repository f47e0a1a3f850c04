/** The interaction modes of the interface: `model` picks one (docs/architecture/upstream.md#queries). */
export const MODES = ["ask", "reason", "build"] as const;
/** One interaction mode. */
export type Mode = (typeof MODES)[number];

/** The modes quoted and comma-separated, for messages: `'ask', 'reason', 'build'`. */
export const QUOTED_MODES = MODES.map((mode) => `'${mode}'`).join(", ");
