/**
 * The allowed imports between packages and entry points (docs/architecture.md, "Allowed
 * imports") are ESLint rules (eslint.config.js): each case lints one import as if it lived at a
 * path and checks that the rule fires, or that an allowed import passes.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ESLint } from "eslint";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const eslint = new ESLint({ cwd: root });

/** The import-rule messages for `source` linted as `filePath` (relative to the repository). */
async function restricted(source: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${source}\nexport {};\n`, { filePath: `${root}${filePath}` });
  return (result?.messages ?? []).filter((m) => m.ruleId?.endsWith("no-restricted-imports")).map((m) => m.message);
}

interface Case {
  file: string;
  source: string;
  /** A fragment of the message expected; null: the import is allowed. */
  refused: string | null;
}

const cases: Case[] = [
  {
    file: "ingest/src/x.ts",
    source: `import { startEngine } from "@tidemark/engine/runtime";`,
    refused: "ingest uses",
  },
  { file: "ingest/src/x.ts", source: `import { protocol } from "@tidemark/engine";`, refused: "ingest uses" },
  {
    file: "ingest/src/http/x.ts",
    source: `import { PaneStore } from "../../../dashboard/server/pane-store.js";`,
    refused: "another package's file by relative path",
  },
  { file: "ingest/src/x.ts", source: `import { ensureStream } from "@tidemark/engine/nats";`, refused: null },
  { file: "ingest/src/x.ts", source: `import { parseDuration } from "@tidemark/engine/core";`, refused: null },
  { file: "ingest/src/x.ts", source: `import { eventsSubject } from "@tidemark/engine/protocol";`, refused: null },

  {
    file: "dashboard/app/lib/x.ts",
    source: `import type { ServerFrame } from "../../server/ws-frames.js";`,
    refused: "share types through dashboard/protocol",
  },
  {
    file: "dashboard/app/lib/x.ts",
    source: `import { connectNats } from "@tidemark/engine/nats";`,
    refused: "the app",
  },
  { file: "dashboard/app/x.ts", source: `import { connect } from "@nats-io/transport-node";`, refused: "no NATS" },
  { file: "dashboard/app/x.ts", source: `import { readFileSync } from "node:fs";`, refused: "no Node built-ins" },
  {
    file: "dashboard/protocol/x.ts",
    source: `import { Fanout } from "../server/fanout.js";`,
    refused: "dashboard/protocol",
  },
  {
    file: "dashboard/app/lib/x.ts",
    source: `import type { ServerFrame } from "../../protocol/ws-frames.js";`,
    refused: null,
  },
  { file: "dashboard/app/lib/x.ts", source: `import { parseDuration } from "@tidemark/engine/core";`, refused: null },

  {
    file: "dashboard/server/x.ts",
    source: `import { startEngine } from "@tidemark/engine/runtime";`,
    refused: "the dashboard server uses",
  },
  {
    file: "dashboard/server/x.ts",
    source: `import { live } from "../app/lib/live.svelte.js";`,
    refused: "serves the built app",
  },
  {
    file: "dashboard/server/x.ts",
    source: `import { natsConnectOptions } from "@tidemark/engine/nats";`,
    refused: null,
  },
  {
    file: "dashboard/server/x.ts",
    source: `import { isAllServices } from "../protocol/all-services.js";`,
    refused: null,
  },

  {
    file: "engine/src/core/x.ts",
    source: `import { startEngine } from "../runtime/start-engine.js";`,
    refused: "the core",
  },
  {
    file: "engine/src/core/session/x.ts",
    source: `import { connectNats } from "../../nats/index.js";`,
    refused: "the core",
  },
  {
    file: "engine/src/core/session/x.test.ts",
    source: `import { startEngine } from "../../runtime/start-engine.js";`,
    refused: "the core",
  },
  {
    file: "engine/src/core/session/x.test.ts",
    source: `import type { CoreFactory } from "../../runtime/start-engine.js";`,
    refused: null,
  },
  {
    file: "engine/src/nats/x.ts",
    source: `import { RuntimeError } from "../runtime/errors.js";`,
    refused: "NATS wiring",
  },
  { file: "engine/src/nats/x.ts", source: `import { STREAM_EVENTS } from "../protocol.js";`, refused: null },
  // The runtime's folders in layers (docs/architecture.md, "The engine's folders").
  {
    file: "engine/src/runtime/input/x.ts",
    source: `import { OperatorHost } from "../host/operator-host.js";`,
    refused: "runtime/input/ may not import",
  },
  {
    file: "engine/src/runtime/output/x.ts",
    source: `import { HoldLog } from "../status/hold-log.js";`,
    refused: "runtime/output/ may not import",
  },
  {
    file: "engine/src/runtime/host/x.ts",
    source: `import { EngineWorker } from "../worker/engine-worker.js";`,
    refused: "runtime/host/ may not import",
  },
  {
    file: "engine/src/runtime/worker/x.ts",
    source: `import { MergeOperator } from "../merge/merge-operator.js";`,
    refused: "runtime/worker/ may not import",
  },
  {
    file: "engine/src/runtime/merge/x.ts",
    source: `import { paneSink } from "../worker/start-engine.js";`,
    refused: "runtime/merge/ may not import",
  },
  {
    file: "engine/src/runtime/merge/x.ts",
    source: `import { OperatorHost } from "../host/operator-host.js";`,
    refused: null,
  },
  {
    file: "engine/src/runtime/merge/x.ts",
    source: `import { PaneStore } from "../../../../dashboard/server/pane-store.js";`,
    refused: "another package's file by relative path",
  },
  {
    file: "engine/src/runtime/output/x.test.ts",
    source: `import { HoldWatch } from "../status/hold-watch.js";`,
    refused: null,
  },
  { file: "engine/src/protocol.ts", source: `import { readFileSync } from "node:fs";`, refused: "no Node built-ins" },

  {
    file: "deploy/src/commands/x.ts",
    source: `import { startEngine } from "../../../engine/src/runtime/index.js";`,
    refused: "another package's file by relative path",
  },
  {
    file: "deploy/src/x.ts",
    source: `import { startEngine } from "@tidemark/engine/src/runtime/index.js";`,
    refused: "through its entry points",
  },
  { file: "deploy/src/x.ts", source: `import { startEngine } from "@tidemark/engine/runtime";`, refused: null },
  {
    file: "test/src/dashboard/x.ts",
    source: `import { startEngine } from "../engine/engine-fixtures.js";`,
    refused: null,
  },
  {
    file: "test/src/dashboard/x.ts",
    source: `import { Fanout } from "../../../dashboard/server/fanout.js";`,
    refused: "another package's file by relative path",
  },
];

describe("allowed imports between packages (ESLint)", () => {
  for (const c of cases) {
    it(`${c.refused === null ? "allows" : "refuses"} in ${c.file}: ${c.source}`, async () => {
      const messages = await restricted(c.source, c.file);
      if (c.refused === null) expect(messages).toEqual([]);
      else {
        expect(messages).toHaveLength(1);
        expect(messages[0]).toContain(c.refused);
        expect(messages[0]).toContain("docs/architecture.md");
      }
    });
  }
});
