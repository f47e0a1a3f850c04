/** What a consent page shows: who asks, where the browser goes back to, and the step the user is at. */
export interface ConsentView {
  /** The form's own address (`/oauth/interaction/<uid>`). */
  action: string;
  csrf: string;
  clientName: string | undefined;
  clientId: string;
  redirectUri: string;
  /** Whether the client is a metadata document from an allowed host (its name is then not self-declared). */
  verified?: boolean | undefined;
  /** Whether the client asked for a refresh token (it then keeps access until the grant ends or is revoked). */
  offline?: boolean | undefined;
  /** The key step (type the key) or the workspace step (pick one the key can list). */
  step: { kind: "key" } | { kind: "sign-in"; issuer: string } | { kind: "workspace"; sealedKey?: string | undefined; workspaces: string[] };
  /** A problem with the last submission, shown above the form. */
  error?: string | undefined;
}

/** The response headers of every consent and error page: never framed, cached or referred from. */
export const PAGE_HEADERS: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

/** Text made safe inside HTML elements and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:1rem;background:#f6f7f9;color:#1b1f24}
main{max-width:32rem;margin:0 auto;background:#fff;border-radius:8px;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.15)}
h1{font-size:1.3rem;margin:0 0 .75rem}code{word-break:break-all}label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=password]{width:100%;box-sizing:border-box;font-size:1rem;padding:.6rem;border:1px solid #8c959f;border-radius:6px}
fieldset{border:1px solid #d0d7de;border-radius:6px;margin:.75rem 0}fieldset label{font-weight:400;margin:.35rem 0}
.alert{background:#ffebe9;border:1px solid #ff8182;border-radius:6px;padding:.6rem}.buttons{display:flex;gap:.5rem;flex-wrap:wrap;margin-top:1rem}
button{font-size:1rem;padding:.6rem 1rem;border-radius:6px;border:1px solid #8c959f;background:#fff;min-height:44px}
button.primary{background:#1f6feb;color:#fff;border-color:#1f6feb}small{color:#57606a}`;

function page(title: string, body: string): string {
  return "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">" +
    `<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

/** The longest client name shown; a longer one is cut. */
export const SHOWN_NAME_LENGTH = 60;

/** A self-declared name made safe to show: no control, format (bidi, zero-width) or line characters; at most 60 characters. */
export function cleanName(name: string): string {
  const cleaned = name.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, "").replace(/\s+/g, " ").trim();
  const characters = [...cleaned];
  return characters.length > SHOWN_NAME_LENGTH ? `${characters.slice(0, SHOWN_NAME_LENGTH - 1).join("")}…` : cleaned;
}

/**
 * Who asks, as a person can check it: first the host the code goes to (what the user can verify),
 * then the client's name, marked self-declared unless its metadata document comes from an allowed
 * host, and warnings for a redirect to this machine (any program on it can listen there) or over
 * plain http.
 */
function requester(view: ConsentView): string {
  const url = URL.parse(view.redirectUri);
  const host = url?.host || view.redirectUri;
  const loopback = url !== null && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname.toLowerCase());
  const name = view.clientName ? cleanName(view.clientName) : "";
  const who = view.verified
    ? `<p>Client: <strong>${escapeHtml(name || view.clientId)}</strong> <small>(verified: its description comes from <code>${escapeHtml(URL.parse(view.clientId)?.host ?? view.clientId)}</code>)</small></p>`
    : `<p>Name it gives itself: <strong>${escapeHtml(name || "(none)")}</strong> <small>(self-declared, unverified: anyone can register any name)</small></p>`;
  const warnings = [
    loopback ? "The code goes to a program on this computer (a local address): continue only if you just started the connection from an application on this computer." : "",
    url?.protocol === "http:" ? "The code is sent over plain http (unencrypted)." : "",
  ].filter(Boolean).map((warning) => `<p class="alert">${escapeHtml(warning)}</p>`).join("");
  return `<p>The access you grant goes to <strong class="host">${escapeHtml(host)}</strong>.</p>${who}${warnings}
<p><small>Redirect address: <code>${escapeHtml(view.redirectUri)}</code><br>Client id: <code>${escapeHtml(view.clientId)}</code><br>Continue only if you started this from that application.</small></p>`;
}

const ALLOWS = `<p><small><strong>What it allows:</strong> asking questions of the one workspace you pick and reading the sources the answers cite
(the tools ask, reason, build, search and fetch), with your key, until you revoke it. It cannot change anything in the workspace.
__OFFLINE__
The application never sees your key; it gets a token that only this adapter accepts.</small></p>
<p><small><strong>How to revoke it:</strong> remove the connector in the application (it revokes its tokens), or rotate the workspace key:
every grant made with the old key stops working.</small></p>`;

/** The consent page (works without JavaScript; one column that reads on a phone). */
export function consentPage(view: ConsentView): string {
  const error = view.error ? `<p class="alert" role="alert">${escapeHtml(view.error)}</p>` : "";
  const hidden = `<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">`;
  const deny = "<button type=\"submit\" name=\"action\" value=\"deny\">Deny</button>";
  let form: string;
  if (view.step.kind === "key") {
    form = `<form method="post" action="${escapeHtml(view.action)}">${hidden}<input type="hidden" name="step" value="key">
<label for="key">Workspace API key</label>
<input id="key" name="key" type="password" autocomplete="off" required autofocus>
<div class="buttons"><button class="primary" type="submit" name="action" value="continue">Continue</button>${deny}</div></form>`;
  } else if (view.step.kind === "sign-in") {
    form = `<form method="post" action="${escapeHtml(view.action)}">${hidden}<input type="hidden" name="step" value="sign-in">
<p>Sign in at your organisation's identity provider (<strong>${escapeHtml(new URL(view.step.issuer).host)}</strong>): this adapter uses the team's workspace key, never yours.</p>
<div class="buttons"><button class="primary" type="submit" name="action" value="sign-in">Sign in</button>${deny}</div></form>`;
  } else {
    const { workspaces, sealedKey } = view.step;
    const choices = workspaces
      .map((id, index) => `<label><input type="radio" name="workspace" value="${escapeHtml(id)}"${index === 0 ? " checked" : ""} required> ${escapeHtml(id)}</label>`)
      .join("\n");
    form = `<form method="post" action="${escapeHtml(view.action)}">${hidden}<input type="hidden" name="step" value="workspace">
${sealedKey ? `<input type="hidden" name="sealed_key" value="${escapeHtml(sealedKey)}">` : ""}
<fieldset><legend>Workspace it may use</legend>${choices}</fieldset>
<div class="buttons"><button class="primary" type="submit" name="action" value="allow">Allow</button>${deny}</div></form>`;
  }
  const offline = view.offline ? "The application also gets a refresh token: it keeps this access without asking you again until the grant ends or you revoke it." : "";
  return page("Connect to your workspace", `<h1>Connect to your workspace</h1>${requester(view)}${error}${form}${ALLOWS.replace("__OFFLINE__", offline)}`);
}

/** A page that says what went wrong and what to do (an expired link, a form from elsewhere, a library error). */
export function errorPage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p role="alert">${escapeHtml(message)}</p><p><small>Start the connection again from the application.</small></p>`);
}
