/**
 * The dependency direction of src/, checked on every `npm test` (test/architecture/dependencies.test.ts
 * runs depcruise with this file). docs/architecture.md ("Module map") explains the layers.
 *
 *   composition   main.ts, cli.ts, gateway.ts, app.ts,    (assemble everything; nothing imports them)
 *                 composition/
 *   agents/       agent endpoints and entries           → inbound, routing, catalogue, plugins, customizations, leaves
 *   inbound/      HTTP handling per protocol era          → routing, catalogue, session, cluster, net, leaves
 *   routing/      dispatch and scopes                     → catalogue, upstream, leaves
 *   catalogue/    merged, filtered, namespaced lists      → upstream (types), integrity, leaves
 *   upstream/     connectors, links, registry             → net, leaves
 *   cluster/      replicas sharing the Redis store        → session, net, leaves
 *   session/      session registry, event stores          → net, leaves
 *   plugins/      plugin and agent declarations           → leaves
 *   net/          address rules, the egress guard         → leaves
 *   lifecycle/    graceful drain, hot reload               → upstream, leaves (composition wires it)
 *   integrity/    tool pins, the poisoning scanner, holds  → cluster (its Redis connection), leaves
 *   admin/        the admin page, tool-integrity approvals → inbound, upstream, customizations, lifecycle, integrity, leaves
 *   customizations/ what the gateway publishes, toggles,   → inbound (body, bind rules), routing (gateway resources),
 *                 enablement, per-user credentials          catalogue, upstream, cluster (its Redis), plugins, net, leaves
 *   leaves        config/ policy/ errors.ts observability/ naming/ rpc/: import only each other
 *
 * Type-only imports count for the layers (a type is coupling too); the cycle rule looks at value
 * imports only, since a type-only cycle disappears when compiled.
 */
const LEAVES = '^src/(config|policy|observability|naming|rpc)/|^src/errors[.]ts$';
const COMPOSITION = '^src/(main|cli|gateway|app)[.]ts$|^src/composition/';

/** A rule that `from` may import nothing under src/ except `allowed` (regex alternatives of folders). */
function onlyImports(name, comment, from, allowed) {
  return {
    name,
    comment,
    severity: 'error',
    from: { path: from },
    // The composition root has its own rule.
    to: { path: '^src/', pathNot: [`^src/(${allowed})/`, LEAVES, from, COMPOSITION] },
  };
}

module.exports = {
  forbidden: [
    {
      name: 'no-value-cycles',
      comment: 'Modules must not depend on each other in a loop of value imports.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'composition-is-the-top',
      comment: 'main, cli, gateway, app and composition/ assemble the rest; no module below imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: COMPOSITION },
      to: { path: COMPOSITION },
    },
    {
      name: 'leaves-import-only-leaves',
      comment: 'config, policy, errors, observability, naming and rpc are leaves: they import nothing of the rest of src/.',
      severity: 'error',
      from: { path: LEAVES },
      to: { path: '^src/', pathNot: LEAVES },
    },
    onlyImports(
      'agents-assemble-endpoints',
      'agents/ builds agent endpoints from inbound endpoints, plugin declarations and the customisation list; nothing below imports it.',
      '^src/agents/',
      'inbound|routing|catalogue|plugins|customizations',
    ),
    onlyImports(
      'inbound-goes-through-routing',
      'inbound/ reaches upstreams through routing/ only, never upstream/ itself.',
      '^src/inbound/',
      'routing|catalogue|session|cluster|net',
    ),
    onlyImports('routing-below-inbound', 'routing/ never imports inbound/, session/ or cluster/.', '^src/routing/', 'catalogue|upstream'),
    onlyImports('catalogue-below-routing', 'catalogue/ never imports routing/ or inbound/ (tool integrity judges its listings).', '^src/catalogue/', 'upstream|integrity'),
    onlyImports('upstream-below-catalogue', 'upstream/ never imports routing/, catalogue/ or inbound/.', '^src/upstream/', 'net'),
    onlyImports('cluster-beside-inbound', 'cluster/ builds on session/ and net/, never on inbound/ or routing/.', '^src/cluster/', 'session|net'),
    onlyImports('session-below-inbound', 'session/ never imports inbound/, routing/ or upstream/.', '^src/session/', 'net'),
    onlyImports('plugins-are-declarations', 'plugins/ reads declarations; it builds on the leaves only.', '^src/plugins/', 'plugins'),
    onlyImports('net-is-low', 'net/ builds on the leaves only.', '^src/net/', 'net'),
    onlyImports('integrity-beside-the-catalogue', 'integrity/ (pins, scanner, holds) builds on the leaves and the cluster Redis connection; the catalogue and the routes call it.', '^src/integrity/', 'integrity|cluster'),
    onlyImports('lifecycle-drives-the-registry', 'lifecycle/ (drain, reload) reaches the running gateway through the registry and narrow hooks only.', '^src/lifecycle/', 'upstream'),
    onlyImports(
      'customizations-publish-the-gateway',
      'customizations/ publishes servers, plugins and agents with their live state and per-scope enablement; it reads the layers below and only agents/, admin/ and the composition import it.',
      '^src/customizations/',
      'customizations|inbound|routing|catalogue|upstream|cluster|plugins|net',
    ),
    onlyImports('admin-reads-the-gateway', 'admin/ reads the registry, the customisation list and reload outcomes; it serves nothing else.', '^src/admin/', 'inbound|upstream|customizations|lifecycle|integrity'),
    {
      name: 'src-not-to-tests',
      comment: 'Production code never imports tests, fixtures, benchmarks or the demo.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|demo)/' },
    },
    {
      name: 'src-not-to-dev-deps',
      comment: 'Production code imports only dependencies, never devDependencies (they are not installed in production).',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'src-imports-resolve',
      comment: 'Every import in src/ resolves to a file or an installed package.',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
    {
      name: 'src-not-to-unlisted-packages',
      comment: 'Every package src/ imports is declared in package.json.',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      extensions: ['.ts', '.js'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      exportsFields: ['exports'],
      mainFields: ['module', 'main', 'types'],
    },
  },
};
