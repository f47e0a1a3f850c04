import type { ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { UnsupportedParameter } from "../dialects/unsupported-parameter.js";
import { UnsupportedParameterError } from "../errors/adapter-error.js";

/** How parameters the workspace cannot honour are treated (`LENIENT_PARAMETERS`). */
export interface ParameterPolicy {
  /** `on`: ignored and named in `service-ignored-parameters`; `off`: refused. */
  lenient: boolean;
  logger: Logger;
  /** Told of each parameter ignored (metrics). */
  onIgnored?: (param: string) => void;
}

/**
 * Refuses a request that asks for what the workspace cannot do (docs/architecture.md#honest-capabilities),
 * before anything is asked of it: a 400 naming the first such parameter, with every problem in the
 * message. With `LENIENT_PARAMETERS=on` they are ignored instead, and the response says so in its
 * `service-ignored-parameters` header (and a debug log line).
 */
export function refuseUnsupported(
  found: readonly UnsupportedParameter[],
  response: Pick<ServerResponse, "setHeader">,
  policy: ParameterPolicy,
): void {
  const [first] = found;
  if (!first) return;
  if (!policy.lenient) throw new UnsupportedParameterError(found.map((problem) => problem.message).join(" "), first.param);
  const params = found.map((problem) => problem.param);
  response.setHeader("service-ignored-parameters", params.join(", "));
  for (const param of params) policy.onIgnored?.(param);
  policy.logger.debug({ ignoredParameters: params }, "parameters the workspace cannot honour were ignored (LENIENT_PARAMETERS=on)");
}
