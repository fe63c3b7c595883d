/**
 * The Docker Compose deployment (docker-compose.yml, Dockerfile, deploy/) cannot be started on
 * the machines that run this suite (no Docker engine), so it is checked statically: every
 * reference resolves, nothing is published beyond the host's loopback, the replicas' configs
 * parse with the gateway's own parser, and the load balancer spreads requests without stickiness.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../../src/config/load.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const deployDir = join(root, 'deploy');

type Build = string | { context?: string; dockerfile?: string };
type Volume = string | { type?: string; source?: string; target?: string };
type Port = string | number | { host_ip?: string; published?: string | number; target?: number };

interface Service {
  build?: Build;
  image?: string;
  entrypoint?: string | string[];
  command?: string | string[];
  depends_on?: string[] | Record<string, unknown>;
  network_mode?: string;
  volumes?: Volume[];
  ports?: Port[];
}

interface Mount {
  source: string;
  target: string;
}

const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const services = Object.entries(compose.services);
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

/** Services a service needs: `depends_on` (list or map form) and a `service:` network namespace. */
function dependencies(service: Service): string[] {
  const deps = service.depends_on;
  const named = deps === undefined ? [] : Array.isArray(deps) ? deps : Object.keys(deps);
  const network = service.network_mode?.startsWith('service:') ? [service.network_mode.slice('service:'.length)] : [];
  return [...named, ...network];
}

/** Bind mounts of host paths (short `./src:/target[:ro]` or long syntax); named volumes are skipped. */
function bindMounts(service: Service): Mount[] {
  return (service.volumes ?? []).flatMap((volume): Mount[] => {
    if (typeof volume === 'string') {
      const [source = '', target = ''] = volume.split(':');
      return source.startsWith('.') || source.startsWith('/') ? [{ source, target }] : [];
    }
    return volume.type === 'bind' && volume.source !== undefined ? [{ source: volume.source, target: volume.target ?? '' }] : [];
  });
}

/** The host address a published port binds; `undefined` means every interface. */
function publishedHostIp(port: Port): string | undefined {
  if (typeof port === 'object') return port.host_ip;
  const spec = String(port).replace(/\/(tcp|udp)$/, '');
  const bracketed = /^\[([^\]]+)\]:/.exec(spec);
  if (bracketed) return bracketed[1];
  const parts = spec.split(':');
  return parts.length === 3 ? parts[0] : undefined;
}

function argv(value: string | string[] | undefined): string[] | undefined {
  return typeof value === 'string' ? value.split(/\s+/) : value;
}

/** The image's `CMD` (exec form), which a service runs unless it sets `command`. */
const imageCmd = JSON.parse(/^CMD\s+(\[.*\])\s*$/m.exec(dockerfile)?.[1] ?? '[]') as string[];

/** Services that run the gateway: built from this repository, the image's own entrypoint. */
const gateways = services.filter(([, s]) => s.build !== undefined && s.entrypoint === undefined);

function configPathOf(service: Service): string {
  const args = argv(service.command) ?? imageCmd;
  return args[args.indexOf('--config') + 1] ?? '';
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

/** nginx directives as [name, ...args], comments dropped, blocks flattened. */
function nginxDirectives(text: string): string[][] {
  return text
    .replace(/#[^\n]*/g, '')
    .split(/[;{}]/)
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0)
    .map((statement) => statement.split(/\s+/));
}

function seconds(value: string): number {
  const match = /^(\d+)(ms|s|m|h)?$/.exec(value);
  if (match === null) return Number.NaN;
  const scale = { ms: 0.001, s: 1, m: 60, h: 3600 }[match[2] ?? 's'] ?? Number.NaN;
  return Number(match[1]) * scale;
}

describe('docker-compose.yml', () => {
  it('depends only on services it defines', () => {
    const missing = services.flatMap(([name, s]) =>
      dependencies(s).filter((dep) => compose.services[dep] === undefined).map((dep) => `${name} → ${dep}`),
    );
    expect(missing).toEqual([]);
  });

  it('builds from a context and Dockerfile that exist in the repository', () => {
    const built = services.filter(([, s]) => s.build !== undefined);
    expect(built.length).toBeGreaterThan(0);
    for (const [, { build }] of built) {
      const spec = typeof build === 'string' ? { context: build } : (build ?? {});
      const context = resolve(root, spec.context ?? '.');
      expect(statSync(context).isDirectory()).toBe(true);
      expect(existsSync(resolve(context, spec.dockerfile ?? 'Dockerfile'))).toBe(true);
    }
  });

  it('mounts only files that exist under deploy/', () => {
    const mounts = services.flatMap(([, s]) => bindMounts(s));
    expect(mounts.length).toBeGreaterThan(0);
    for (const { source } of mounts) {
      const path = resolve(root, source);
      expect(relative(deployDir, path).startsWith('..'), `${source} is outside deploy/`).toBe(false);
      expect(existsSync(path) && statSync(path).isFile(), `${source} does not exist`).toBe(true);
    }
  });

  it('publishes ports on 127.0.0.1 only', () => {
    const published = services.flatMap(([name, s]) => (s.ports ?? []).map((port) => ({ name, port, ip: publishedHostIp(port) })));
    expect(published.length).toBeGreaterThan(0);
    for (const entry of published) expect(entry.ip, `${entry.name}: ${JSON.stringify(entry.port)}`).toBe('127.0.0.1');
  });

  it('publishes only the load balancer', () => {
    expect(services.filter(([, s]) => (s.ports ?? []).length > 0).map(([name]) => name)).toEqual(['lb']);
  });
});

describe('gateway configs under deploy/', () => {
  const files = readdirSync(deployDir).filter((file) => /^gateway.*\.json$/.test(file));

  it('exist', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files)('%s parses with the gateway config parser and its policy allows the container bind', (file) => {
    const config = parseConfig(readJson(join(deployDir, file)), { baseDir: deployDir });
    // 0.0.0.0 is the container's own interface; the bind rule then needs auth or the acknowledgement.
    expect(config.listen.host).toBe('0.0.0.0');
    expect(config.policy.acknowledgedNoAuth).toBe(true);
    expect(config.eventStore.kind).toBe('redis');
    const redisHost = new URL(config.eventStore.url ?? '').hostname;
    expect(compose.services[redisHost], `eventStore.url names no compose service`).toBeDefined();
  });

  it('has at least two replicas, each mounting its config where the image reads it and the policy it names beside it', () => {
    expect(gateways.length).toBeGreaterThanOrEqual(2);
    for (const [name, service] of gateways) {
      const mounts = bindMounts(service);
      const configPath = configPathOf(service);
      const config = mounts.find((m) => m.target === configPath);
      expect(config, `${name} does not mount ${configPath}`).toBeDefined();
      const policyRef = readJson(resolve(root, config!.source)).policy;
      if (typeof policyRef !== 'string' || !policyRef.endsWith('.json')) continue;
      const policy = mounts.find((m) => m.target === posix.resolve(posix.dirname(configPath), policyRef));
      expect(policy, `${name} does not mount its policy file`).toBeDefined();
      expect(resolve(root, policy!.source)).toBe(resolve(dirname(resolve(root, config!.source)), policyRef));
    }
  });

  it('gives each replica a demo upstream in its own network namespace for every loopback HTTP upstream', () => {
    for (const [name, service] of gateways) {
      const source = bindMounts(service).find((m) => m.target === configPathOf(service))!.source;
      const config = parseConfig(readJson(resolve(root, source)), { baseDir: dirname(resolve(root, source)) });
      for (const server of Object.values(config.servers)) {
        if (server.transport !== 'streamableHttp') continue;
        const url = new URL(server.url);
        if (url.hostname !== '127.0.0.1') continue;
        const sidecar = services.find(
          ([, s]) => s.network_mode === `service:${name}` && (argv(s.command) ?? []).join(' ').includes(`--port ${url.port}`),
        );
        expect(sidecar, `${name}: nothing serves ${url.port} in its namespace`).toBeDefined();
      }
    }
  });
});

describe('load balancer config', () => {
  const lb = compose.services.lb;
  const source = lb === undefined ? undefined : bindMounts(lb).find((m) => m.target.startsWith('/etc/nginx/'))?.source;
  const text = source === undefined ? '' : readFileSync(resolve(root, source), 'utf8');
  const directives = nginxDirectives(text);
  const find = (name: string) => directives.filter(([directive]) => directive === name);

  it('is mounted into the stock nginx image', () => {
    expect(lb?.image).toMatch(/^nginx:/);
    expect(source).toBeDefined();
  });

  it('balances across exactly the gateway replicas', () => {
    // `server` with an address is an upstream member; a bare `server` opens a virtual host block.
    const servers = find('server').flatMap(([, address]) => (address === undefined ? [] : [address]));
    const expected = gateways.map(([name, service]) => {
      const config = readJson(resolve(root, bindMounts(service).find((m) => m.target === configPathOf(service))!.source));
      return `${name}:${(config.listen as { port: number }).port}`;
    });
    expect(servers.sort()).toEqual(expected.sort());
  });

  it('has no session affinity', () => {
    const sticky = directives.filter(([name]) => ['ip_hash', 'hash', 'sticky', 'sticky_cookie_insert'].includes(name ?? ''));
    expect(sticky).toEqual([]);
    expect(text.replace(/#[^\n]*/g, '')).not.toMatch(/\bsticky\b|\bcookie\b/i);
  });

  it.each([
    ['proxy_buffering', ['off']],
    ['proxy_http_version', ['1.1']],
    ['proxy_set_header', ['Connection', '""']],
  ])('streams SSE: %s %j', (name, args) => {
    expect(find(name).map(([, ...rest]) => rest)).toContainEqual(args);
  });

  it.each(['proxy_read_timeout', 'proxy_send_timeout'])('keeps quiet SSE streams open: %s is at least 5 minutes', (name) => {
    const values = find(name).map(([, value]) => seconds(value ?? ''));
    expect(values.length).toBe(1);
    expect(values[0]).toBeGreaterThanOrEqual(300);
  });
});

describe('Dockerfile', () => {
  const ignorePatterns = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !line.startsWith('#'));
  const ignoreRegexes = ignorePatterns.map(
    (pattern) => new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*/g, '\0').replace(/\*/g, '[^/]*').replace(/\0/g, '.*')}(/.*)?$`),
  );
  const ignored = (path: string) => ignoreRegexes.some((regex) => regex.test(path));

  it('copies from the build context only paths that exist and are not ignored', () => {
    const sources = [...dockerfile.matchAll(/^COPY\s+(?!--from)(.+)$/gm)].flatMap((match) => match[1]!.trim().split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(0);
    for (const path of sources.filter((p) => p !== '.')) {
      expect(existsSync(join(root, path)), `${path} does not exist`).toBe(true);
      expect(ignored(path), `${path} is excluded by .dockerignore`).toBe(false);
    }
  });

  it('keeps in the build context everything the TypeScript build compiles', () => {
    const tsconfig = readJson(join(root, 'tsconfig.json')) as { include: string[] };
    for (const path of ['package.json', 'package-lock.json', 'tsconfig.json', ...tsconfig.include]) {
      expect(ignored(path), `${path} is excluded by .dockerignore`).toBe(false);
    }
  });

  it('leaves host build output, dependencies and git metadata out of the build context', () => {
    for (const path of ['node_modules', 'dist', '.git', '.env']) expect(ignored(path), path).toBe(true);
  });

  it('runs the gateway as a non-root user from a production-only stage', () => {
    const stages = dockerfile.split(/^FROM\s/m).slice(1);
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const runtime = stages.at(-1)!;
    expect(runtime).toMatch(/npm ci --omit=dev/);
    expect(runtime).toMatch(/^USER\s+(?!root\b|0\b)\S+/m);
    expect(runtime).toMatch(/^ENTRYPOINT \["node", "dist\/src\/main\.js"\]$/m);
    expect(runtime).toMatch(/^HEALTHCHECK[\s\S]*\/healthz/m);
  });
});

