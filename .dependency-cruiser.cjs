// The layers of src/ and what each may import (docs/architecture.md, "4. Layers"), checked in CI
// by `npm run depcruise`. A layer may import itself and the layers it lists, nothing else: an
// import that points up or sideways fails the build. Every file of src/ belongs to exactly one
// layer, so a new folder, or a new file of a subsystem, needs a place here first. No import
// cycles either.
const { readdirSync } = require('node:fs');
const { join, sep } = require('node:path');

/**
 * The subsystems: one folder each under src/ with its controller, pure logic, store functions and
 * SQL (sql/) side by side. A folder spans layers, each of its files in the layer of its role, so
 * that no import runs up within it either: its pure files import only pure ones, its store
 * module the store and below, its controller never the API. File names without `.ts`.
 */
const SUBSYSTEMS = {
  // The node protocol: both ends' routes and messages (the agent imports only these), the
  // server's routes (in the API's layer, registered by src/api/server.ts) and their store.
  'agent-protocol': {
    pure: ['messages', 'routes'],
    store: ['nodes-store', 'reports-store'],
    api: ['nodes-server', 'reports-server'],
  },
  cron: { pure: ['schedule'], store: ['store'], controllers: ['controller'] },
  'fair-share': { pure: ['share-order'], store: ['store'] },
  'job-reconcile': { pure: ['retry'], store: ['store'], controllers: ['controller'] },
  'node-health': { store: ['store'], controllers: ['controller'] },
  placement: {
    pure: ['best-fit', 'node-index', 'policies', 'reason-marks', 'types'],
    store: ['store'],
    controllers: ['controller', 'pending-set'],
  },
  workflows: { pure: ['dag'], store: ['store'], controllers: ['controller'] },
};

/** The subsystems' files of one role, as `paths`: `^src/job-reconcile/(retry)\\.ts$`. */
function role(name) {
  return Object.entries(SUBSYSTEMS)
    .filter(([, roles]) => roles[name])
    .map(([folder, roles]) => `^src/${folder}/(${roles[name].join('|')})\\.ts$`);
}

/** Bottom to top. `paths` are regular expressions on paths from the repository's root. */
const LAYERS = [
  // No I/O: the wire shapes and builders, the subsystems' scheduling math, the error classes.
  {
    name: 'pure',
    paths: ['^src/domain/', '^src/errors/', '^src/seeded-random\\.ts$', ...role('pure')],
    may: [],
  },
  // Pieces every process is built from.
  {
    name: 'shared',
    paths: ['^src/(config|lifecycle|log|paths)\\.ts$', '^src/testing/', '^src/net/', '^src/metrics/', '^src/report/'],
    may: ['pure'],
  },
  { name: 'store', paths: ['^src/store/', ...role('store')], may: ['pure', 'shared'] },
  { name: 'lease', paths: ['^src/lease/'], may: ['pure', 'shared', 'store'] },
  // Who asks, and whether they may: tokens and RBAC, for the API and the CLI.
  { name: 'auth', paths: ['^src/auth/'], may: ['pure', 'shared', 'store'] },
  // Controllers and the API sit side by side: neither imports the other.
  {
    name: 'controllers',
    paths: ['^src/controllers/', ...role('controllers')],
    may: ['pure', 'shared', 'store', 'lease'],
  },
  { name: 'api', paths: ['^src/api/', ...role('api')], may: ['pure', 'shared', 'store', 'lease', 'auth'] },
  // A worker talks to the control plane over HTTP only.
  { name: 'agent', paths: ['^src/agent/'], may: ['pure', 'shared'] },
  {
    name: 'replica',
    paths: ['^src/replica\\.ts$'],
    may: ['pure', 'shared', 'store', 'lease', 'auth', 'controllers', 'api'],
  },
  // The tools, each above what it drives.
  // It makes its cluster's keys and tokens (src/simulator/credentials.ts).
  { name: 'simulator', paths: ['^src/simulator/'], may: ['pure', 'shared', 'store', 'auth'] },
  // The checker reads the history (store) and the agents' run logs (their format is the agent's).
  { name: 'checker', paths: ['^src/checker/'], may: ['pure', 'shared', 'store', 'agent'] },
  {
    name: 'chaos',
    paths: ['^src/chaos/'],
    may: ['pure', 'shared', 'store', 'lease', 'api', 'agent', 'simulator', 'checker'],
  },
  {
    name: 'bench',
    paths: ['^src/bench/'],
    may: ['pure', 'shared', 'store', 'lease', 'controllers', 'api', 'agent', 'simulator', 'checker', 'chaos'],
  },
  {
    name: 'cli',
    paths: ['^src/cli/'],
    may: [
      'pure',
      'shared',
      'store',
      'lease',
      'auth',
      'controllers',
      'api',
      'agent',
      'replica',
      'simulator',
      'checker',
      'chaos',
      'bench',
    ],
  },
  // The dashboard runs in a browser, which src/api/routes/ui.ts serves only these modules.
  { name: 'ui', paths: ['^src/ui/'], may: [], extra: ['^src/domain/', '^src/net/any-replica\\.ts$'] },
];

const byName = new Map(LAYERS.map((layer) => [layer.name, layer]));
const either = (paths) => `(${paths.join('|')})`;

// Exactly one layer per file, checked here on the files themselves: a subsystem's file left out
// of its list, or a path two layers claim, stops the check with the file's name (the no-layer
// rule below sees only a file that imports something).
const unplaced = readdirSync(join(__dirname, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => `src/${file.split(sep).join('/')}`)
  .map((file) => ({ file, in: LAYERS.filter((layer) => layer.paths.some((path) => new RegExp(path).test(file))) }))
  .filter((placed) => placed.in.length !== 1);
if (unplaced.length > 0)
  throw new Error(
    'every file of src/ belongs to exactly one layer of .dependency-cruiser.cjs:\n' +
      unplaced
        .map((placed) => `  ${placed.file}: ${placed.in.map((layer) => layer.name).join(', ') || 'none'}`)
        .join('\n'),
  );

module.exports = {
  forbidden: [
    ...LAYERS.map((layer) => ({
      name: `layer-${layer.name}`,
      comment: `${layer.name} may import only ${[layer.name, ...layer.may].join(', ')}${layer.extra ? ' and ' + layer.extra.join(', ') : ''} (docs/architecture.md, "4. Layers")`,
      severity: 'error',
      from: { path: either(layer.paths) },
      to: {
        path: '^src/',
        pathNot: either([
          ...layer.paths,
          ...layer.may.flatMap((name) => byName.get(name).paths),
          ...(layer.extra ?? []),
        ]),
      },
    })),
    {
      name: 'no-layer',
      comment: 'every file of src/ belongs to a layer of .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^src/', pathNot: either(LAYERS.flatMap((layer) => layer.paths)) },
      to: {},
    },
    {
      name: 'no-circular',
      comment: 'an import cycle: the modules of it cannot be read, or loaded, one before the other',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count too: a type from a higher layer ties the lower one to it all the same.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
