// Flat ESLint config. The boundary block enforces docs/architecture.md, "Packages and boundaries":
// the pure core, the sketches and the dashboard's PromQL engine import no node:*, NATS or fastify,
// and never read Date.now() or process.env.
import { builtinModules } from "node:module";
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

export const PURE_FILES = ["engine/src/core/**/*.ts", "sketches/src/**/*.ts", "dashboard/server/promql/**/*.ts"];
export const PURE_EXEMPT = ["**/*.test.ts", "**/bench/**"];

const why =
  "the pure core takes time, I/O and config as arguments (docs/architecture.md, Packages and boundaries): move this into an adapter";

export const boundaryRules = {
  "no-restricted-imports": [
    "error",
    {
      paths: builtinModules.map((name) => ({ name, message: `no Node built-ins here: ${why}` })),
      patterns: [
        { group: ["node:*"], message: `no Node built-ins here: ${why}` },
        { group: ["@nats-io/*", "nats"], message: `no NATS here: ${why}` },
        { group: ["fastify", "@fastify/*"], message: `no fastify here: ${why}` },
      ],
    },
  ],
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
  { files: PURE_FILES, ignores: PURE_EXEMPT, rules: boundaryRules },
);
