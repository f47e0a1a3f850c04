import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { load as parseYaml } from "js-yaml";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/config.js";
import { projectRoot } from "../../../src/util/package-info.js";

interface ComposeService {
  profiles?: string[];
  environment?: Record<string, string>;
  command?: string[] | string;
  depends_on?: string[];
}

/** The environment an adapter service of the compose file gets, `${VAR:?…}` filled in as a user would. */
function environmentOf(service: ComposeService): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([name, value]) => [name, String(value).replace(/\$\{WORKSPACE_BASE_URL:\?[^}]*\}/, "https://workspace.example.com")]),
  );
}

describe("docker-compose.yml", () => {
  const compose = parseYaml(readFileSync(join(projectRoot(), "docker-compose.yml"), "utf8")) as { services: Record<string, ComposeService> };
  const { services } = compose;

  it("runs adapters whose configuration the adapter accepts: one Redis by default, Sentinel in the sentinel profile", () => {
    const single = loadConfig(environmentOf(services.adapter as ComposeService));
    expect(single.redis?.topology).toEqual({ kind: "single", url: "redis://redis:6379" });
    // /metrics on a port of its own, which the compose file does not publish (only the API port is).
    expect(single.metrics.port).toBe(9464);
    expect(JSON.stringify(compose.services.adapter)).not.toContain("9464:");
    const sentinel = services["adapter-sentinel"] as ComposeService;
    expect(sentinel.profiles).toEqual(["sentinel"]);
    const config = loadConfig(environmentOf(sentinel));
    expect(config.redis?.topology).toMatchObject({ kind: "sentinel", master: "adapter" });
    // Each sentinel named is a service of the profile, monitoring that master name with a quorum of two.
    for (const { host, port } of config.redis?.topology.kind === "sentinel" ? config.redis.topology.sentinels : []) {
      const service = services[host] as ComposeService;
      expect(service.profiles).toEqual(["sentinel"]);
      const command = ([] as string[]).concat(service.command ?? []).join(" ");
      expect(command).toContain(`port ${port}`);
      expect(command).toContain("sentinel monitor adapter redis-master 6379 2");
      expect(command).toContain("--sentinel");
    }
    expect(([] as string[]).concat(services["redis-replica"]?.command ?? []).join(" ")).toContain("--replicaof redis-master 6379");
  });
});

describe("deploy/kubernetes", () => {
  const folder = join(projectRoot(), "deploy/kubernetes");
  const kustomization = parseYaml(readFileSync(join(folder, "kustomization.yaml"), "utf8")) as { resources: string[] };
  const manifests = kustomization.resources.map((file) => parseYaml(readFileSync(join(folder, file), "utf8")) as { apiVersion: string; kind: string; metadata: { name: string } } & Record<string, any>);
  const byKind = (kind: string) => manifests.find((manifest) => manifest.kind === kind) as Record<string, any>;

  it("lists every manifest of the folder, each valid against the Kubernetes API schemas (kubernetes-models)", async () => {
    const files = readdirSync(folder).filter((file) => file.endsWith(".yaml") && file !== "kustomization.yaml").sort();
    expect([...kustomization.resources].sort()).toEqual(files);
    const models: Record<string, () => Promise<new (data: any) => { validate(): void }>> = {
      "v1/ConfigMap": async () => (await import("kubernetes-models/v1")).ConfigMap,
      "v1/Secret": async () => (await import("kubernetes-models/v1")).Secret,
      "v1/Service": async () => (await import("kubernetes-models/v1")).Service,
      "apps/v1/Deployment": async () => (await import("kubernetes-models/apps/v1")).Deployment,
      "policy/v1/PodDisruptionBudget": async () => (await import("kubernetes-models/policy/v1")).PodDisruptionBudget,
      "autoscaling/v2/HorizontalPodAutoscaler": async () => (await import("kubernetes-models/autoscaling/v2")).HorizontalPodAutoscaler,
      "monitoring.coreos.com/v1/ServiceMonitor": async () => (await import("@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1")).ServiceMonitor,
    };
    expect(manifests.map((manifest) => `${manifest.apiVersion}/${manifest.kind}`).sort()).toEqual(Object.keys(models).sort());
    for (const manifest of manifests) {
      const Model = await (models[`${manifest.apiVersion}/${manifest.kind}`] as () => Promise<new (data: any) => { validate(): void }>)();
      expect(() => new Model(manifest).validate(), `${manifest.kind} ${manifest.metadata.name}`).not.toThrow();
    }
    // The check is real: a wrong type is refused.
    const Deployment = await (models["apps/v1/Deployment"] as () => Promise<new (data: any) => { validate(): void }>)();
    const broken = structuredClone(byKind("Deployment"));
    broken.spec.template.spec.containers[0].ports[0].containerPort = "8080";
    expect(() => new Deployment(broken).validate()).toThrow(/containerPort/);
  });

  it("configures the adapter as its configuration accepts, with probes, drain and scaling that fit together", () => {
    const configMap = byKind("ConfigMap");
    const secret = byKind("Secret");
    const config = loadConfig({ ...configMap.data, ...secret.stringData });
    expect(config.server.host).toBe("0.0.0.0");
    expect(config.redis?.topology.kind).toBe("sentinel");
    const deployment = byKind("Deployment");
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;
    expect(container.envFrom).toEqual([{ configMapRef: { name: configMap.metadata.name } }, { secretRef: { name: secret.metadata.name } }]);
    const port = container.ports.find((entry: { name: string }) => entry.name === "http");
    expect(port.containerPort).toBe(config.server.port);
    expect(container.readinessProbe.httpGet).toEqual({ path: "/ready", port: "http" });
    expect(container.livenessProbe.httpGet).toEqual({ path: "/health", port: "http" });
    // SIGTERM comes after preStop; the grace period covers preStop, the drain and a margin.
    const preStopSeconds = container.lifecycle.preStop.sleep.seconds;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(preStopSeconds + config.server.shutdownGraceMs / 1000);
    // The image runs as the `node` user (uid 1000; Dockerfile).
    expect(pod.securityContext.runAsUser).toBe(1000);
    expect(readFileSync(join(projectRoot(), "Dockerfile"), "utf8")).toMatch(/^USER node$/m);
    const labels = deployment.spec.template.metadata.labels;
    expect(deployment.spec.selector.matchLabels).toEqual(labels);
    const service = byKind("Service");
    expect(service.spec.selector).toEqual(labels);
    expect(service.spec.ports[0].targetPort).toBe("http");
    expect(byKind("PodDisruptionBudget").spec.selector.matchLabels).toEqual(labels);
    expect(byKind("HorizontalPodAutoscaler").spec.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name: deployment.metadata.name });
    // Metrics on their own port (METRICS_PORT), scraped with the Secret's METRICS_API_KEY; key names shown there.
    const metricsPort = container.ports.find((entry: { name: string }) => entry.name === "metrics");
    expect(metricsPort.containerPort).toBe(config.metrics.port);
    expect(config.metrics).toMatchObject({ apiKey: secret.stringData.METRICS_API_KEY, keyNames: true });
    expect(service.spec.ports).toContainEqual(expect.objectContaining({ name: "metrics", targetPort: "metrics" }));
    const monitor = byKind("ServiceMonitor");
    expect(monitor.spec.selector.matchLabels).toEqual(service.metadata.labels);
    expect(monitor.spec.endpoints).toEqual([
      expect.objectContaining({
        port: "metrics",
        path: "/metrics",
        authorization: { type: "Bearer", credentials: { name: secret.metadata.name, key: "METRICS_API_KEY" } },
      }),
    ]);
  });
});
