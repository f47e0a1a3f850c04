import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/config.js";

describe("loadConfig", () => {
  it("has defaults that run the embedded workspace on localhost:8080", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      server: { port: 8080, host: "127.0.0.1" },
      upstream: { baseUrl: undefined, modeField: "mode", queryTimeoutMs: { ask: 120_000, reason: 300_000, build: 600_000 } },
      limits: { maxChoices: 8 },
    });
  });

  it("lets QUERY_TIMEOUT_MS set all modes and a mode's own variable win", () => {
    const config = loadConfig({ QUERY_TIMEOUT_MS: "5000", BUILD_TIMEOUT_MS: "9000" });
    expect(config.upstream.queryTimeoutMs).toEqual({ ask: 5000, reason: 5000, build: 9000 });
  });

  it("names every bad variable", () => {
    expect(() =>
      loadConfig({ PORT: "eighty", MAX_CHOICES: "0", WORKSPACE_BASE_URL: "ftp://x", MODE_FIELD: "a b" }),
    ).toThrow(/PORT[\s\S]*WORKSPACE_BASE_URL[\s\S]*MODE_FIELD[\s\S]*MAX_CHOICES/);
    expect(() => loadConfig({ POLL_INTERVAL_MIN_MS: "500", POLL_INTERVAL_MAX_MS: "100" })).toThrow(
      ConfigError,
    );
  });

  it("has no rate limits unless one is set: admission then costs nothing", () => {
    expect(loadConfig({}).limits.rate).toBeUndefined();
    expect(loadConfig({ RATE_LIMIT_OVERRIDES: "acme=rpm:off" }).limits.rate).toBeUndefined();
  });

  it("reads the rate limits and resolves each workspace's overrides over the defaults", () => {
    const config = loadConfig({
      RATE_LIMIT_RPM: "60",
      RATE_LIMIT_CONCURRENT: "4",
      RATE_LIMIT_TPD: "100000",
      RATE_LIMIT_OVERRIDES: " acme=rpm:600, tpm:20000,tpmo:900000 ; lab:eu.1=concurrent:off,rpm:off,tpd:off;",
    });
    const none = { tpm: null, tpmo: null };
    expect(config.limits.rate).toEqual({
      defaults: { rpm: 60, concurrent: 4, tpd: 100_000, ...none },
      workspaces: {
        acme: { rpm: 600, concurrent: 4, tpm: 20000, tpd: 100_000, tpmo: 900_000 },
        "lab:eu.1": { rpm: null, concurrent: null, tpd: null, ...none },
      },
      slotTtlMs: 30_000,
      answerTokens: { ask: 500, reason: 1500, build: 3000 },
    });
    expect(loadConfig({ RATE_LIMIT_TPD: "9", RATE_LIMIT_ANSWER_TOKENS: " reason:2500 , build:8000" }).limits.rate?.answerTokens).toEqual({ ask: 500, reason: 2500, build: 8000 });
    // Only an override: the other workspaces are not limited.
    expect(loadConfig({ RATE_LIMIT_OVERRIDES: "acme=concurrent:2" }).limits.rate?.defaults).toEqual({ rpm: null, concurrent: null, tpm: null, tpd: null, tpmo: null });
  });

  it("stops on a malformed override, naming the entry and what is wrong", () => {
    const cases: [string, RegExp][] = [
      ["acme", /'acme': expected <workspace>=<kind>:<value>/],
      ["=rpm:5", /'=rpm:5': expected <workspace>=/],
      ["ac me=rpm:5", /'ac me=rpm:5': expected/],
      ["acme=rpm:5;acme=tpm:9", /'acme=tpm:9': workspace 'acme' is named twice/],
      ["acme=rps:5", /'acme=rps:5': 'rps:5' is not <kind>:<value> with a kind of rpm, concurrent, tpm, tpd, tpmo/],
      ["acme=rpm:0", /'acme=rpm:0': 'rpm:0': the value must be a whole number from 1, or off/],
      ["acme=rpm:1.5", /the value must be a whole number from 1, or off/],
      ["acme=rpm:5,rpm:6", /'rpm' is set twice/],
      ["acme=rpm:5:6", /'rpm:5:6' is not <kind>:<value>/],
      ["acme=", /'' is not <kind>:<value>/],
    ];
    for (const [value, message] of cases) {
      expect(() => loadConfig({ RATE_LIMIT_OVERRIDES: value }), value).toThrow(ConfigError);
      expect(() => loadConfig({ RATE_LIMIT_OVERRIDES: value }), value).toThrow(message);
      expect(() => loadConfig({ RATE_LIMIT_OVERRIDES: value }), value).toThrow(/RATE_LIMIT_OVERRIDES/);
    }
    expect(() => loadConfig({ RATE_LIMIT_RPM: "0" })).toThrow(/RATE_LIMIT_RPM/);
    expect(() => loadConfig({ RATE_LIMIT_SLOT_TTL_MS: "10" })).toThrow(/RATE_LIMIT_SLOT_TTL_MS/);
    for (const [value, message] of [["chat:100", /'chat:100': expected <mode>:<tokens>/], ["ask:0", /'ask:0'/], ["ask:5,ask:6", /'ask:6': 'ask' is set twice/], ["ask", /'ask': expected/]] as const) {
      expect(() => loadConfig({ RATE_LIMIT_ANSWER_TOKENS: value }), value).toThrow(message);
      expect(() => loadConfig({ RATE_LIMIT_ANSWER_TOKENS: value }), value).toThrow(/RATE_LIMIT_ANSWER_TOKENS/);
    }
  });

  it("drops a trailing slash from the upstream URL", () => {
    expect(loadConfig({ WORKSPACE_BASE_URL: "https://workspace.example.com/api/" }).upstream.baseUrl).toBe(
      "https://workspace.example.com/api",
    );
  });
});

describe("the docs", () => {
  it("show the configuration table written from the config docs (run `npm run docs` after changing them)", async () => {
    const { readFileSync } = await import("node:fs");
    const { configurationTable } = await import("../../../src/config/config-docs.js");
    const page = readFileSync(new URL("../../../docs/configuration.md", import.meta.url), "utf8");
    expect(page).toContain(`-->\n${configurationTable()}\n<!-- config-table:end -->`);
  });

  it("show the standard OpenTelemetry variables tracing reads, written from the same list as --help", async () => {
    const { readFileSync } = await import("node:fs");
    const { tracingTable } = await import("../../../src/config/config-docs.js");
    const page = readFileSync(new URL("../../../docs/observability.md", import.meta.url), "utf8");
    expect(page).toContain(`-->\n${tracingTable()}\n<!-- tracing-table:end -->`);
    expect(tracingTable()).toContain("| `OTEL_EXPORTER_OTLP_ENDPOINT` | unset (tracing off) |");
  });
});

describe("the command line", () => {
  it("turns flags into environment variables and answers --help and --version", async () => {
    const { parseCommandLine } = await import("../../../src/config/command-line.js");
    expect(parseCommandLine(["--port", "9000", "--workspace-base-url=http://127.0.0.1:1"], "1.2.3")).toEqual({
      kind: "run",
      environment: { PORT: "9000", WORKSPACE_BASE_URL: "http://127.0.0.1:1" },
    });
    const help = parseCommandLine(["--help"], "1.2.3");
    expect(help).toMatchObject({ kind: "print", exitCode: 0 });
    expect(help.kind === "print" && help.text).toMatch(/--max-concurrent-per-workspace\s+The same, per workspace/);
    expect(help.kind === "print" && help.text).toMatch(/Tracing \(OpenTelemetry\) is set by the standard variables alone[^]*\n {2}OTEL_EXPORTER_OTLP_ENDPOINT\n/);
    expect(parseCommandLine(["-v"], "1.2.3")).toEqual({ kind: "print", text: "1.2.3\n", exitCode: 0 });
    expect(parseCommandLine(["--nope"], "1.2.3")).toMatchObject({ kind: "print", exitCode: 2 });
    expect(parseCommandLine(["--port"], "1.2.3")).toMatchObject({ kind: "print", exitCode: 2 });
    expect(parseCommandLine(["--documents", "./my-folder"], "1.2.3")).toEqual({
      kind: "run",
      environment: { EMBEDDED_DOCUMENTS_DIR: "./my-folder" },
    });
  });

  it("documents every variable of the schema in --help", async () => {
    const { parseCommandLine } = await import("../../../src/config/command-line.js");
    const { environmentSchema } = await import("../../../src/config/config.js");
    const help = parseCommandLine(["--help"], "1.2.3");
    for (const name of Object.keys(environmentSchema.shape)) {
      expect(help.kind === "print" && help.text).toContain(`(${name}`);
    }
  });

  it("serves MCP unless MCP=off, and says so in --help", async () => {
    const { parseCommandLine } = await import("../../../src/config/command-line.js");
    const { loadConfig, ConfigError } = await import("../../../src/config/config.js");
    expect(loadConfig({}).mcp.enabled).toBe(true);
    expect(loadConfig({ MCP: "off" }).mcp.enabled).toBe(false);
    expect(() => loadConfig({ MCP: "maybe" })).toThrow(ConfigError);
    const help = parseCommandLine(["--help"], "1.2.3");
    expect(help.kind === "print" && help.text).toMatch(/--mcp\s+on serves the workspace as a remote MCP server/);
    expect(help.kind === "print" && help.text).toMatch(/\/mcp \(MCP tools ask, reason, build, search, fetch;/);
  });
});

describe("MCP_OAUTH", () => {
  it("stops start-up with a clear error when OAuth would run over plain http off loopback", () => {
    expect(() => loadConfig({ MCP_OAUTH: "on", HOST: "0.0.0.0" })).toThrow(/PUBLIC_URL: required with MCP_OAUTH=on when HOST \(0\.0\.0\.0\) is not a loopback address/);
    expect(() => loadConfig({ MCP_OAUTH: "on", HOST: "0.0.0.0", PUBLIC_URL: "http://mcp.example.com" })).toThrow(/PUBLIC_URL: must be an https URL/);
    expect(() => loadConfig({ MCP_OAUTH: "on", REDIS_URL: "redis://127.0.0.1:6379" })).toThrow(/OAUTH_SECRET: required/);
    expect(() => loadConfig({ MCP_OAUTH: "on", OAUTH_SECRET: "short" })).toThrow(/OAUTH_SECRET: each secret must be at least 32 characters/);
    expect(loadConfig({ MCP_OAUTH: "on", OAUTH_SECRET: `${"n".repeat(32)}, ${"o".repeat(32)}` }).oauth?.secrets).toEqual(["n".repeat(32), "o".repeat(32)]);
    // Plain http on every interface (a typed key in clear): refused, even with a loopback PUBLIC_URL.
    expect(() => loadConfig({ MCP_OAUTH: "on", HOST: "0.0.0.0", PUBLIC_URL: "http://localhost:8080" })).toThrow(/HOST: must be a loopback address when PUBLIC_URL is plain http/);
    expect(() => loadConfig({ MCP_OAUTH: "on", TRUSTED_PROXIES: "10.0.0.0/8, nonsense" })).toThrow(/TRUSTED_PROXIES: 'nonsense' is not an address or CIDR/);
    expect(loadConfig({ MCP_OAUTH: "on", HOST: "0.0.0.0", PUBLIC_URL: "https://mcp.example.com/" }).oauth?.publicUrl).toBe("https://mcp.example.com");
    expect(loadConfig({ MCP_OAUTH: "on" }).oauth?.publicUrl).toBeUndefined();
    expect(loadConfig({}).oauth).toBeUndefined();
    const team = { MCP_OAUTH: "on", WORKSPACE_API_KEY: "sk-held", ADAPTER_API_KEYS: "sk-client" };
    expect(() => loadConfig(team)).toThrow(/OAUTH_IDP_ISSUER: OAUTH_IDP_ISSUER and OAUTH_IDP_CLIENT_ID are required/);
    expect(() => loadConfig({ ...team, OAUTH_IDP_ISSUER: "http://idp.example.com", OAUTH_IDP_CLIENT_ID: "a" })).toThrow(/OAUTH_IDP_ISSUER: must be an https URL/);
    // Without an allow-list anyone the provider signs in (any Google account) would get the deployment's workspaces.
    expect(() => loadConfig({ ...team, OAUTH_IDP_ISSUER: "https://idp.example.com", OAUTH_IDP_CLIENT_ID: "a" })).toThrow(/OAUTH_IDP_ALLOWED_EMAIL_DOMAINS: the team set-up needs an allow-list of who may sign in/);
    const allowed = { ...team, OAUTH_IDP_CLIENT_ID: "a", OAUTH_IDP_ALLOWED_EMAIL_DOMAINS: "Example.com", OAUTH_IDP_GROUP_WORKSPACES: "eng=acme,globex; sales=globex" };
    // An issuer written with a trailing slash (Auth0's) is kept as written: ID tokens name it so.
    const idp = loadConfig({ ...allowed, OAUTH_IDP_ISSUER: "https://tenant.auth0.com/" }).oauth?.team?.idp;
    expect(idp?.issuer).toBe("https://tenant.auth0.com/");
    expect(idp?.allow).toMatchObject({ emailDomains: ["example.com"], groupWorkspaces: { eng: ["acme", "globex"], sales: ["globex"] } });
    expect(() => loadConfig({ ...allowed, OAUTH_IDP_ISSUER: "https://idp.example.com", OAUTH_IDP_GROUP_WORKSPACES: "eng" })).toThrow(/OAUTH_IDP_GROUP_WORKSPACES: 'eng' is not/);
  });
});

describe("the keys (auth) and the governance settings (docs/governance.md)", () => {
  it("are off by default: no listed keys, no usage counting, no audit trail", () => {
    const config = loadConfig({});
    expect(config.auth).toMatchObject({ clientKeys: [], gatewayKeys: [], adminKeys: [] });
    expect(config.governance).toEqual({ usage: undefined, audit: undefined });
  });

  it("read named and bare keys, gateways and their identity headers, and turn usage on with an admin key", () => {
    const { auth, governance } = loadConfig({
      WORKSPACE_API_KEY: "sk-held",
      ADAPTER_API_KEYS: "team-search=sk-one, sk-two==",
      GATEWAY_API_KEYS: "litellm=sk-gateway",
      GATEWAY_IDENTITY_HEADERS: "X-User, x-team",
      ADMIN_API_KEYS: "ops=sk-admin",
      AUDIT_LOG: "/var/log/adapter-audit.jsonl",
    });
    expect(auth).toMatchObject({
      clientKeys: [{ name: "team-search", key: "sk-one" }, { name: undefined, key: "sk-two==" }],
      gatewayKeys: [{ name: "litellm", key: "sk-gateway" }],
      identityHeaders: ["x-user", "x-team"],
      adminKeys: [{ name: "ops", key: "sk-admin" }],
    });
    expect(governance).toMatchObject({
      usage: { retentionDays: 400 },
      audit: { sink: { kind: "file", path: "/var/log/adapter-audit.jsonl" }, content: false },
    });
    expect(loadConfig({ USAGE_COUNTING: "on", AUDIT_LOG: "otlp", AUDIT_CONTENT: "on" }).governance).toMatchObject({ usage: { retentionDays: 400 }, audit: { sink: { kind: "otlp" }, content: true } });
  });

  it("stops on a key in two lists, a name shared by a key and a gateway, a bad identity header, or usage read but not counted, never quoting a key", () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ ADAPTER_API_KEYS: "sk-same", ADMIN_API_KEYS: "sk-same" }, /ADMIN_API_KEYS: a key of ADMIN_API_KEYS is also in ADAPTER_API_KEYS/],
      [{ ADAPTER_API_KEYS: "a=sk-1", GATEWAY_API_KEYS: "a=sk-2" }, /'a' names both a client key and a gateway/],
      [{ GATEWAY_IDENTITY_HEADERS: "authorization" }, /'authorization' cannot carry an identity/],
      [{ ADMIN_API_KEYS: "sk-admin", USAGE_COUNTING: "off" }, /ADMIN_API_KEYS: reads the usage that USAGE_COUNTING=off does not count/],
      [{ ADAPTER_API_KEYS: "bad name=sk-secret-value" }, /entry 1: the name before '=' must be/],
      [{ ADAPTER_API_KEYS: "sk-secret-value,x=sk-secret-value" }, /entry 2 repeats the key of entry 1/],
      [{ ADAPTER_API_KEYS: "ok=sk-1", METRICS_API_KEY: "sk-1" }, /METRICS_API_KEY: is also a key of/],
    ];
    for (const [environment, message] of cases) {
      expect(() => loadConfig(environment)).toThrow(message);
      expect(() => loadConfig(environment)).not.toThrow(/sk-(secret|same|1|2|admin)|'x'/);
    }
  });

  it("accepts a held workspace key with gateway keys or a key file alone", () => {
    expect(() => loadConfig({ WORKSPACE_API_KEY: "sk-held", GATEWAY_API_KEYS: "sk-gateway" })).not.toThrow();
    expect(() => loadConfig({ WORKSPACE_API_KEY: "sk-held", ADAPTER_API_KEYS_FILE: "/run/secrets/keys" })).not.toThrow();
    expect(() => loadConfig({ WORKSPACE_API_KEY: "sk-held" })).toThrow(/ADAPTER_API_KEYS: required when WORKSPACE_API_KEY is set/);
  });
});
