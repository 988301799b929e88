/**
 * deploy/kubernetes/ (issue #19): every manifest parses; the probes name routes the service
 * serves; every environment key the manifests set is one the service accepts, and together they
 * load as a cluster-mode configuration; the termination grace outlasts the service's own
 * shutdown; /dev/shm is a 2 GiB memory volume; an init reaps children; each pod has its volume.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { parseAllDocuments } from "yaml";
import { loadConfig } from "../../control/config/index.ts";
import { configSchema, PLAIN_KEYS } from "../../control/config/schema.ts";
import { shapeOf } from "../../control/config/keys.ts";
import { SECTIONS } from "../../control/config/sources.ts";
import { clusterSettings } from "../../control/cluster/settings.ts";
import { startTestApp } from "../harness/app.ts";

const DIR = fileURLToPath(new URL("../../deploy/kubernetes/", import.meta.url));
type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function manifests(): Map<string, Doc[]> {
  const out = new Map<string, Doc[]>();
  for (const file of readdirSync(DIR).filter((f) => f.endsWith(".yaml")).sort()) {
    const docs = parseAllDocuments(readFileSync(join(DIR, file), "utf8"));
    for (const d of docs) assert.deepEqual(d.errors, [], `${file} parses`);
    out.set(file, docs.map((d) => d.toJS() as Doc));
  }
  return out;
}

const byKind = (all: Map<string, Doc[]>, kind: string): Doc[] => [...all.values()].flat().filter((d) => d.kind === kind);

/** A key the configuration reads: a plain key, or a section path (`Mail__Smtp__Url`) the schema knows. */
function accepted(name: string): boolean {
  if (name === "CONFIG_FILE") return true;
  if ([...PLAIN_KEYS.server, ...PLAIN_KEYS.bot, ...PLAIN_KEYS.storage].includes(name)) return true;
  const parts = name.split(/__|:/);
  const section = SECTIONS.find((s) => s.toLowerCase() === parts[0]?.toLowerCase());
  if (!section || parts.length < 2) return false;
  let shape = shapeOf(configSchema)?.[section];
  for (const part of parts.slice(1)) {
    const fields = shape ? shapeOf(shape) : undefined;
    const key = fields && Object.keys(fields).find((k) => k.toLowerCase() === part.toLowerCase());
    if (!fields || !key) return /^\d+$/.test(part);
    shape = fields[key];
  }
  return true;
}

test("every manifest parses and names its kind; kustomization lists them all", () => {
  const all = manifests();
  for (const [file, docs] of all) for (const d of docs) assert.ok(d.kind && (d.metadata?.name || d.kind === "Kustomization"), `${file}: ${JSON.stringify(d).slice(0, 80)}`);
  const kustomization = byKind(all, "Kustomization")[0]!;
  assert.deepEqual([...kustomization.resources].sort(), [...all.keys()].filter((f) => f !== "kustomization.yaml").sort());
  for (const kind of ["StatefulSet", "Service", "PodDisruptionBudget", "ConfigMap", "Secret"]) assert.ok(byKind(all, kind).length > 0, kind);
});

test("the StatefulSet: probes on served routes, init, /dev/shm, a volume per pod, grace longer than the drain", async (t) => {
  const all = manifests();
  const set = byKind(all, "StatefulSet")[0]!;
  const pod = set.spec.template.spec;
  const container = pod.containers[0];
  const app = await startTestApp({ features: [] });
  t.after(() => app.close());
  for (const probe of ["readinessProbe", "livenessProbe", "startupProbe"]) {
    const path = container[probe]?.httpGet?.path as string;
    assert.ok(path, `${probe} is an HTTP probe`);
    assert.equal(container[probe].httpGet.port, container.ports[0].name);
    const res = await app.request("GET", path);
    assert.ok(res.status === 200 || res.status === 503, `${probe} ${path} is served (${res.status})`);
  }
  assert.match(String(container.command?.[0] ?? ""), /tini/, "an init process reaps children");
  const shm = pod.volumes.find((v: Doc) => container.volumeMounts.some((m: Doc) => m.name === v.name && m.mountPath === "/dev/shm"));
  assert.equal(shm?.emptyDir?.medium, "Memory");
  assert.equal(shm?.emptyDir?.sizeLimit, "2Gi");
  const configMap = byKind(all, "ConfigMap")[0]!.data as Record<string, string>;
  const claim = set.spec.volumeClaimTemplates[0].metadata.name;
  assert.ok(container.volumeMounts.some((m: Doc) => m.name === claim && m.mountPath === configMap.RECORDINGS_DIR), "RECORDINGS_DIR is the pod's own volume");
  const drain = Number(configMap.DRAIN_TIMEOUT_SECONDS);
  const grace = Number(configMap.SHUTDOWN_GRACE_SECONDS);
  assert.ok(pod.terminationGracePeriodSeconds > drain + grace + 15, "termination grace outlasts drain + shutdown");
  const headless = byKind(all, "Service").find((s) => s.spec.clusterIP === "None")!;
  assert.equal(set.spec.serviceName, headless.metadata.name);
  assert.equal(headless.spec.publishNotReadyAddresses, true, "draining pods stay reachable for forwarding");
  const labels = set.spec.template.metadata.labels;
  for (const d of [...byKind(all, "Service"), ...byKind(all, "PodDisruptionBudget")]) {
    const selector = d.spec.selector.matchLabels ?? d.spec.selector;
    for (const [k, v] of Object.entries(selector)) assert.equal(labels[k], v, `${d.kind} ${d.metadata.name} selects the pods`);
  }
});

test("every environment key is one the service accepts, and together they load in cluster mode", () => {
  const all = manifests();
  const container = byKind(all, "StatefulSet")[0]!.spec.template.spec.containers[0];
  const env: Record<string, string> = {
    ...(byKind(all, "ConfigMap")[0]!.data as Record<string, string>),
    ...(byKind(all, "Secret")[0]!.stringData as Record<string, string>),
  };
  for (const e of container.env as Doc[]) env[e.name] = e.value ?? (e.valueFrom?.fieldRef ? "recorder-0" : "");
  for (const key of Object.keys(env)) assert.ok(accepted(key), `${key} is a configuration key`);
  assert.ok(!accepted("NOT_A_KEY") && !accepted("Mail__Smtp__Nope"), "the check can fail");
  // Kubernetes expands $(VAR) from earlier entries.
  for (const [k, v] of Object.entries(env)) env[k] = v.replace(/\$\((\w+)\)/g, (_, name: string) => env[name] ?? "");
  const config = loadConfig(env);
  const cluster = clusterSettings(config);
  assert.ok(cluster, "cluster mode is on");
  assert.equal(cluster.instanceId, "recorder-0");
  assert.equal(cluster.instanceUrl, "http://recorder-0.toamaisutaa-instances:8000");
});
