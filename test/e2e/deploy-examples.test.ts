// The deployment recipes (Dockerfile, examples/kubernetes) as far as this machine can check
// them without Docker or a cluster: the Kubernetes objects agree with each other, with the
// example's svc.yaml and with the image (the ConfigMap mounted read-only where the args
// point `svc serve`, probes on /healthz and /readyz, the token from the Secret as ${VAR});
// the Dockerfile is multi-stage, non-root, built with the npm scripts CI runs, and copies
// only what exists and .dockerignore lets through; and the example manifest, mounted in the
// ConfigMap volume layout (..data symlink swap), is served by the real `svc serve` and
// hot-reloads when the ConfigMap is updated.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, posix } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { configMapLayout, waitFor, type Layout } from '../helpers/reload.js';

const K8S = join(ROOT, 'examples', 'kubernetes');
const read = (file: string) => readFileSync(join(K8S, file), 'utf8');
// Parsed YAML documents, checked field by field below.
type Doc = Record<string, any>;
const kustomization = parse(read('kustomization.yaml')) as Doc;
const deployment = parse(read('deployment.yaml')) as Doc;
const service = parse(read('service.yaml')) as Doc;
const secret = parse(read('secret.yaml')) as Doc;
const manifest = parse(read('svc.yaml')) as Doc;
const pod = deployment.spec.template.spec as Doc;
const container = pod.containers[0] as Doc;
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const instructions = dockerfile.replace(/\\\n\s*/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
const TOKEN = 'k8s-example-token-0123456789abcdef';

describe('deployment recipes', () => {
  describe('examples/kubernetes', () => {
    it('mounts the generated ConfigMap read-only, as a folder, where the args point svc serve', () => {
      assert.equal(kustomization.kind, 'Kustomization');
      assert.deepEqual(kustomization.configMapGenerator[0].files, ['svc.yaml']);
      assert.equal(kustomization.generatorOptions.disableNameSuffixHash, true);
      for (const r of kustomization.resources as string[]) assert.ok(existsSync(join(K8S, r)), r);
      const volume = (pod.volumes as Doc[]).find((v) => v.configMap?.name === kustomization.configMapGenerator[0].name);
      assert.ok(volume, 'a volume from the generated ConfigMap');
      const mount = (container.volumeMounts as Doc[]).find((m) => m.name === volume.name);
      assert.ok(mount);
      assert.equal(mount.readOnly, true);
      assert.equal(mount.subPath, undefined, 'a subPath mount never sees ConfigMap updates');
      assert.deepEqual(container.args, [posix.join(mount.mountPath, 'svc.yaml')]);
    });

    it('probes /healthz (liveness) and /readyz (readiness) on the port svc.yaml listens on', () => {
      assert.equal(container.livenessProbe.httpGet.path, '/healthz');
      assert.equal(container.readinessProbe.httpGet.path, '/readyz');
      const port = (container.ports as Doc[]).find((p) => p.name === container.readinessProbe.httpGet.port);
      assert.ok(port);
      assert.equal(port.containerPort, manifest.server.port);
      assert.equal(container.livenessProbe.httpGet.port, port.name);
      assert.equal(service.spec.ports[0].targetPort, port.name);
      assert.deepEqual(service.spec.selector, deployment.spec.selector.matchLabels);
    });

    it('takes the token from the Secret as the variable svc.yaml names, and runs as non-root', () => {
      const m = /^\$\{([A-Z_][A-Z0-9_]*)\}$/.exec(manifest.auth.token);
      assert.ok(m, 'auth.token is ${VAR}');
      const env = (container.env as Doc[]).find((e) => e.name === m[1]);
      assert.ok(env);
      assert.equal(env.valueFrom.secretKeyRef.name, secret.metadata.name);
      assert.ok(env.valueFrom.secretKeyRef.key in secret.stringData);
      assert.equal(secret.stringData[env.valueFrom.secretKeyRef.key], '', 'no token value is committed');
      assert.ok(!(kustomization.resources as string[]).includes('secret.yaml'), 'the placeholder Secret is never applied by accident');
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.equal(container.securityContext.readOnlyRootFilesystem, true);
    });
  });

  describe('Dockerfile', () => {
    const stages = instructions.filter((l) => l.startsWith('FROM '));
    const runs = instructions.filter((l) => l.startsWith('RUN ')).join('\n');

    it('is multi-stage and builds with npm ci and npm run build', () => {
      assert.ok(stages.length >= 2);
      assert.match(stages[0]!, / AS build$/);
      assert.match(runs, /\bnpm ci\b/);
      assert.match(runs, /\bnpm run build\b/);
      const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
      for (const [, s] of runs.matchAll(/npm run ([a-z:-]+)/g)) assert.ok(scripts[s!], `package.json has script ${s}`);
    });

    it('runs svc serve on /etc/fastsvc/svc.yaml as a non-root user, with a /healthz healthcheck', () => {
      const last = (kw: string) => instructions.filter((l) => l.startsWith(`${kw} `)).at(-1);
      assert.equal(last('ENTRYPOINT'), 'ENTRYPOINT ["node", "dist/cli.js", "serve"]');
      assert.equal(last('CMD'), `CMD ["${container.args[0]}"]`);
      const user = last('USER')?.slice(5);
      assert.ok(user && !['root', '0'].includes(user), `USER ${user}`);
      assert.match(last('HEALTHCHECK')!, /\/healthz/);
      assert.match(last('EXPOSE')!, new RegExp(`\\b${manifest.server.port}\\b`));
    });

    it('copies from the context only files that exist and .dockerignore lets through', () => {
      const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
      const sources = instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from=')).flatMap((l) => l.split(/\s+/).slice(1, -1));
      assert.ok(sources.includes('package-lock.json') && sources.includes('src'));
      for (const s of sources) {
        assert.ok(existsSync(join(ROOT, s)), `${s} exists`);
        assert.ok(!ignored.includes(s), `${s} is not in .dockerignore`);
      }
    });
  });

  describe('the example manifest in a ConfigMap volume, served by svc serve', function () {
    this.timeout(30_000);
    let layout: Layout | undefined;
    let srv: Served | undefined;
    after(async () => {
      await srv?.stop();
      if (layout) rmSync(layout.dir, { recursive: true, force: true });
    });

    it('serves it, answers the probes, and reloads when the ConfigMap is updated', async () => {
      const text = read('svc.yaml');
      layout = configMapLayout(text);
      // The pod binds 0.0.0.0; here the same file is served on loopback only.
      srv = await serveManifest({ file: layout.file }, { args: ['--host', '127.0.0.1'], env: { SVC_TOKEN: TOKEN } });
      const call = async () => {
        const res = await fetch(`${srv!.url}/svc/tools/status.get`, {
          method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ service: 'api' }),
        });
        return ((await res.json()) as { result?: string }).result;
      };
      assert.equal((await fetch(`${srv.url}/healthz`)).status, 200);
      assert.equal((await fetch(`${srv.url}/readyz`)).status, 200);
      assert.equal(await call(), 'api: healthy');
      const edited = text.replace('template: "{{service}}: healthy"', 'template: "{{service}}: degraded"');
      assert.notEqual(edited, text);
      layout.write(edited);
      await waitFor(async () => ((await call()) === 'api: degraded' ? true : undefined), 'the edited ConfigMap to serve', 10_000);
      await waitFor(() => (srv!.logs().some((l) => l.event === 'config.reloaded') ? true : undefined), 'the reload log line');
      assert.equal((await fetch(`${srv.url}/readyz`)).status, 200);
    });
  });
});
