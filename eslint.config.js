// Flat ESLint config. The import blocks enforce docs/architecture.md, "Allowed imports": the pure
// core, the sketches and the dashboard's PromQL engine and alert rules import no node:*, NATS or
// fastify, and never read Date.now() or process.env; each package reaches another only through
// its entry points, and never its files by relative path. Every file glob below gets exactly one
// no-restricted-imports block (flat config replaces a rule's options rather than merging them),
// composed from the sets here.
import { builtinModules } from "node:module";
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

export const PURE_FILES = [
  "engine/src/core/**/*.ts",
  "engine/src/config/**/*.ts",
  "engine/src/protocol.ts",
  "engine/src/protocol/**/*.ts",
  "sketches/src/**/*.ts",
  "dashboard/server/promql/**/*.ts",
  "dashboard/server/rules/**/*.ts",
];
export const PURE_EXEMPT = ["**/*.test.ts", "**/bench/**"];

const why =
  "the pure core takes time, I/O and config as arguments (docs/architecture.md, Packages and boundaries): move this into an adapter";
const allowed = "docs/architecture.md, Allowed imports";

/** No Node built-ins: the pure core, the sketches and the browser app. */
const noNode = (where) => ({
  paths: builtinModules.map((name) => ({ name, message: `no Node built-ins here: ${where}` })),
  patterns: [{ group: ["node:*"], message: `no Node built-ins here: ${where}` }],
});
/** No network or server libraries. */
const noServerLibs = (where) => ({
  paths: [{ name: "nats", message: `no NATS here: ${where}` }],
  patterns: [
    { group: ["@nats-io/*"], message: `no NATS here: ${where}` },
    { group: ["fastify", "@fastify/*"], message: `no fastify here: ${where}` },
    { group: ["pino"], message: `no logger here: ${where}` },
  ],
});
/** Entry points of @tidemark/engine a file may not use, with what to do instead. */
const noEngine = (entries, instead) => ({
  paths: entries.map((e) => ({
    name: e === "." ? "@tidemark/engine" : `@tidemark/engine/${e}`,
    message: `not from here: ${instead} (${allowed})`,
  })),
});
/** Another package's files, by package name or by relative path; `own` is the package the file is in. */
const PACKAGE_DIRS = {
  sketches: "src|dist",
  engine: "src|dist",
  ingest: "src|dist",
  dashboard: "server|app|protocol|bench|dist",
  deploy: "src|bin|scripts|dist",
  test: "src|dist",
};
const noOtherPackageFiles = (own) => ({
  patterns: [
    {
      group: ["@tidemark/*/src/**", "@tidemark/*/dist/**", "@tidemark/*/server/**", "@tidemark/*/app/**"],
      message: `import a package through its entry points (package.json "exports"), not its files (${allowed})`,
    },
    {
      regex: Object.entries(PACKAGE_DIRS)
        .filter(([name]) => name !== own)
        .map(([name, dirs]) => `^(\\.\\./)+${name}/(${dirs})/`)
        .join("|"),
      message: `another package's file by relative path: import its entry point (@tidemark/<package>[/entry]) instead (${allowed})`,
    },
  ],
});
/** Relative imports of sibling directories, e.g. the core reaching into the runtime. */
const noSibling = (dirs, instead) => ({
  patterns: [{ regex: `^(\\.\\./)+(${dirs.join("|")})/`, message: `not from here: ${instead} (${allowed})` }],
});

const rule = (...sets) => [
  "error",
  { paths: sets.flatMap((s) => s.paths ?? []), patterns: sets.flatMap((s) => s.patterns ?? []) },
];

const coreLayer = noSibling(["runtime", "nats", "bench"], "the core knows no runtime, NATS wiring or benchmark");

export const boundaryRules = {
  "no-restricted-imports": rule(noNode(why), noServerLibs(why), coreLayer, noOtherPackageFiles("")),
  "no-restricted-syntax": [
    "error",
    {
      selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
      message: `no Date.now() here: ${why}`,
    },
    { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: `no new Date() here: ${why}` },
    {
      selector: "MemberExpression[object.name='process'][property.name='env']",
      message: `no process.env here: ${why}`,
    },
    {
      selector: "CallExpression[callee.object.name='performance'][callee.property.name='now']",
      message: `no performance.now() here: ${why}`,
    },
  ],
};

const browser = `the app runs in the browser and talks to the server over the WebSocket only (${allowed})`;
const code = (dir) => [`${dir}/**/*.ts`, `${dir}/**/*.js`, `${dir}/**/*.mjs`];

/** The same rule, letting `import type` through (@typescript-eslint/no-restricted-imports). */
function typeImportsOnly([level, { paths, patterns }]) {
  const allow = (x) => ({ ...x, allowTypeImports: true });
  return [level, { paths: paths.map(allow), patterns: patterns.map(allow) }];
}

/**
 * Each runtime folder with the runtime folders it may not import: input/, output/ and backfill/
 * stand alone, config/ takes only the partition list of input/, checkpoint/ and status/ sit on
 * those, host/ on all of them, and worker/ and merge/ plug into host/, never into each other.
 */
const RUNTIME_LAYERS = [
  ["input", ["host", "worker", "merge", "checkpoint", "status", "output", "config", "backfill"]],
  ["output", ["host", "worker", "merge", "checkpoint", "status", "input", "config", "backfill"]],
  ["backfill", ["host", "worker", "merge", "checkpoint", "status", "input", "output", "config"]],
  ["config", ["host", "worker", "merge", "checkpoint", "status", "output", "backfill"]],
  ["checkpoint", ["host", "worker", "merge", "status", "backfill"]],
  ["status", ["host", "worker", "merge", "checkpoint", "config", "backfill"]],
  ["host", ["worker", "merge", "backfill"]],
  ["worker", ["merge", "backfill"]],
  ["merge", ["worker", "backfill"]],
];

/** Every file glob with its one import rule, disjoint from the others. */
const importBlocks = [
  { files: PURE_FILES, ignores: PURE_EXEMPT, rules: boundaryRules },
  {
    // The core's tests may name a runtime type (erased at build, e.g. CoreFactory), nothing else of it.
    files: ["engine/src/core/**/*.test.ts", "sketches/src/**/*.test.ts", "sketches/src/bench/**/*.ts"],
    rules: {
      "no-restricted-imports": "off",
      "@typescript-eslint/no-restricted-imports": typeImportsOnly(rule(coreLayer, noOtherPackageFiles(""))),
    },
  },
  {
    files: code("engine/src/nats"),
    rules: {
      "no-restricted-imports": rule(
        noSibling(["runtime", "core", "bench"], "NATS wiring stands on the protocol alone"),
        noOtherPackageFiles("engine"),
      ),
    },
  },
  {
    files: [...code("engine/src/runtime"), ...code("engine/src/bench"), "engine/src/index.ts"],
    ignores: RUNTIME_LAYERS.map(([dir]) => `engine/src/runtime/${dir}/**/*.ts`),
    rules: { "no-restricted-imports": rule(noOtherPackageFiles("engine")) },
  },
  // The runtime's folders in layers (docs/architecture.md, "The engine's folders"; each folder's
  // index.ts states its contract). Tests may reach across: they wire real parts together.
  {
    files: RUNTIME_LAYERS.map(([dir]) => `engine/src/runtime/${dir}/**/*.test.ts`),
    rules: { "no-restricted-imports": rule(noOtherPackageFiles("engine")) },
  },
  ...RUNTIME_LAYERS.map(([dir, refused]) => ({
    files: [`engine/src/runtime/${dir}/**/*.ts`],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": rule(
        noSibling(refused, `runtime/${dir}/ may not import runtime/{${refused.join(",")}}/`),
        noOtherPackageFiles("engine"),
      ),
    },
  })),
  {
    files: code("ingest"),
    rules: {
      "no-restricted-imports": rule(
        noEngine(["runtime", "."], "ingest uses @tidemark/engine/protocol, /nats, /core and /config"),
        noOtherPackageFiles("ingest"),
      ),
    },
  },
  {
    files: [...code("dashboard/app"), ...code("dashboard/protocol")],
    rules: {
      "no-restricted-imports": rule(
        noEngine(
          ["runtime", "nats", "."],
          "the app and the dashboard protocol use @tidemark/engine/protocol and /core",
        ),
        noSibling(["server"], "the app imports nothing from the server; share types through dashboard/protocol"),
        noNode(browser),
        noServerLibs(browser),
        noOtherPackageFiles("dashboard"),
      ),
    },
  },
  {
    files: [...code("dashboard/server"), ...code("dashboard/bench"), "dashboard/*.ts"],
    rules: {
      "no-restricted-imports": rule(
        noEngine(["runtime", "."], "the dashboard server uses @tidemark/engine/protocol, /nats, /core and /config"),
        noSibling(["app"], "the server serves the built app; share types through dashboard/protocol"),
        noOtherPackageFiles("dashboard"),
      ),
    },
  },
  { files: code("deploy"), rules: { "no-restricted-imports": rule(noOtherPackageFiles("deploy")) } },
  { files: code("test"), rules: { "no-restricted-imports": rule(noOtherPackageFiles("test")) } },
];

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "**/dist/**",
      "**/.turbo/**",
      "data/**",
      "**/__fixtures__/**",
      "**/*.svelte",
      "dashboard/app/dist/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  ...importBlocks,
);
