// URLs as the adapter prints them: never with the credentials they may carry (docs/operating.md#credentials-in-urls).

/** What stands for a credential taken out of a URL (OpenTelemetry's convention for `url.full`). */
const REDACTED = "REDACTED";

/** Query parameters whose values are credentials: keys, tokens, passwords, signatures (AWS, Azure, Google signed URLs among them). */
const SECRET_PARAMETER = /(key|token|secret|passw|pwd|sig|credential|auth|session|code)/i;

/**
 * A URL with its user info and the values of its secret-looking query parameters replaced by
 * `REDACTED`, for logs, spans and messages. Text that does not parse as a URL is returned
 * unchanged when it holds nothing that looks like user info, and as a placeholder otherwise.
 */
export function redactUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return /\/\/[^/?#\s]*@/.test(text) ? "(a URL with credentials)" : text;
  }
  const secrets = [...url.searchParams.keys()].filter((name) => SECRET_PARAMETER.test(name));
  if (!url.username && !url.password && secrets.length === 0) return text;
  if (url.username) url.username = REDACTED;
  if (url.password) url.password = REDACTED;
  for (const name of secrets) url.searchParams.set(name, REDACTED);
  return url.href;
}

/** Every `scheme://…` URL inside a text redacted as {@link redactUrl} does (a log message that quotes an endpoint). */
export function redactUrlsIn(text: string): string {
  return text.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, (url) => redactUrl(url));
}

/** Whether a URL carries user info (`user:password@`). */
export function carriesUserInfo(text: string): boolean {
  try {
    const url = new URL(text);
    return url.username !== "" || url.password !== "";
  } catch {
    return false;
  }
}
