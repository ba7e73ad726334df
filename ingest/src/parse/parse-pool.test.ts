/**
 * A parse pool whose workers cannot start (a broken install: the worker module is missing) gives
 * them up instead of respawning for ever, and the body parser then parses inline: ingest keeps
 * answering. The pool with real workers is tested end to end in
 * test/src/security/ingest-parse-offload.test.ts (it needs the built worker module).
 */
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { BodyParser } from "./body-parser.js";
import { ParsePool } from "./parse-pool.js";

const OPTS = { maxEventsPerRequest: 100, maxStringLength: 64, maxFutureSkewMs: 300_000, maxAgeMs: 86_400_000 };

describe("parse pool", () => {
  it("gives up workers that never start, and the parser parses inline", async () => {
    const errors: string[] = [];
    const log = pino({ level: "error" }, { write: (line: string) => void errors.push(line) });
    const pool = new ParsePool(2, 4, OPTS, log, new URL("./no-such-worker.js", import.meta.url));
    await vi.waitFor(() => expect(pool.live).toBe(0), { timeout: 10_000, interval: 10 });
    expect(errors.length).toBe(2);
    expect(errors[0]).toContain("a parse worker failed to start");
    let offloaded = 0;
    const parser = new BodyParser(OPTS, 0, pool, () => offloaded++);
    const parsed = await parser.parse(
      { kind: "events", format: "ndjson" },
      Buffer.from('{"service":"a"}\n{"service":"b"}\n'),
    );
    expect(parsed.batch.events.map((e) => e.service)).toEqual(["a", "b"]);
    expect(offloaded).toBe(0);
    await pool.close();
  });
});
