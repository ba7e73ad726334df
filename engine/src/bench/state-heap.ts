/**
 * `node dist/bench/state-heap.js`: what the held-out workload's open state is made of
 * (docs/decisions/0049-compact-state.md, "Second pass"). A core is fed the held-out events
 * (runtime-held-out.ts), a heap snapshot is written (v8.writeHeapSnapshot), and the self sizes of
 * everything reachable from the core — closures, code and contexts left out — are summed by
 * constructor (plain objects by their property names; typed-array backing stores as
 * "system / JSArrayBufferData"), per open (window, key). Not part of `npm run bench`: a diagnosis.
 */
import { readFileSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { createCore, defaultCoreConfig, simulate } from "../core/index.js";
import type { EventTimeCore } from "../core/stream-core.js";
import { partitionOf } from "../protocol.js";
import { HELD_OUT } from "./runtime-held-out.js";
import { openWindowKeys } from "./window-keys.js";

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; edge_fields: string[]; node_types: [string[]]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** The object a snapshot search starts from (found by its class name). */
class StateRoot {
  constructor(readonly core: EventTimeCore) {}
}

/** Sizes by group of the nodes reachable from the StateRoot's `core`. */
function groups(s: Snapshot): Map<string, { n: number; bytes: number }> {
  const m = s.snapshot.meta;
  const NF = m.node_fields.length;
  const EF = m.edge_fields.length;
  const [nType, nName, nSelf, nEdges] = ["type", "name", "self_size", "edge_count"].map((f) =>
    m.node_fields.indexOf(f),
  );
  const [eType, eName, eTo] = ["type", "name_or_index", "to_node"].map((f) => m.edge_fields.indexOf(f));
  const N = s.nodes;
  const E = s.edges;
  const str = (i: number): string => s.strings[i] as string;
  const type = (i: number): string => m.node_types[0][N[i * NF + (nType as number)] as number] as string;
  const name = (i: number): string => str(N[i * NF + (nName as number)] as number);
  const count = N.length / NF;
  const first = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    first[i] = e;
    e += (N[i * NF + (nEdges as number)] as number) * EF;
  }
  first[count] = E.length;
  const edge = (e: number): { type: string; name: string; to: number } => {
    const t = m.edge_types[0][E[e + (eType as number)] as number] as string;
    const raw = E[e + (eName as number)] as number;
    return {
      type: t,
      name: t === "element" || t === "hidden" ? String(raw) : str(raw),
      to: (E[e + (eTo as number)] as number) / NF,
    };
  };
  let root = -1;
  for (let i = 0; i < count && root < 0; i++) {
    if (type(i) !== "object" || name(i) !== "StateRoot") continue;
    for (let e = first[i] as number; e < (first[i + 1] as number); e += EF) {
      const x = edge(e);
      if (x.type === "property" && x.name === "core") root = x.to;
    }
  }
  const seen = new Uint8Array(count);
  const stack = [root];
  seen[root] = 1;
  const out = new Map<string, { n: number; bytes: number }>();
  // Shared, not per state: the config, the sketches' accuracy specs and mappings.
  const skip = new Set(["config", "cfg", "mapping", "spec", "constructor", "__proto__", "map"]);
  while (stack.length > 0) {
    const i = stack.pop() as number;
    const t = type(i);
    let g = t === "object" || t === "native" ? name(i) : `(${t})`;
    const props: string[] = [];
    for (let e = first[i] as number; e < (first[i + 1] as number); e += EF) {
      const x = edge(e);
      if (g === "Object" && x.type === "property") props.push(x.name);
      if (x.type === "weak" || x.type === "shortcut" || skip.has(x.name)) continue;
      const tt = type(x.to);
      if (tt === "code" || tt === "closure" || name(x.to) === "system / Context" || seen[x.to]) continue;
      seen[x.to] = 1;
      stack.push(x.to);
    }
    if (g === "Object") g = `Object{${props.join(",")}}`;
    const acc = out.get(g) ?? { n: 0, bytes: 0 };
    acc.n++;
    acc.bytes += N[i * NF + (nSelf as number)] as number;
    out.set(g, acc);
  }
  return out;
}

function main(): void {
  const config = defaultCoreConfig();
  const events = simulate(HELD_OUT).sort((a, b) => a.ingest_ts - b.ingest_ts);
  const core = createCore(config) as EventTimeCore;
  const out = { pane: () => undefined, late: () => undefined };
  for (const e of events) core.event(partitionOf(e.service, config.partitions), e, out);
  events.length = 0;
  const held = new StateRoot(core);
  const open = openWindowKeys(held.core);
  const file = writeHeapSnapshot(join(tmpdir(), `state-heap-${process.pid}.heapsnapshot`));
  const g = groups(JSON.parse(readFileSync(file, "utf8")) as Snapshot);
  unlinkSync(file);
  const rows = [...g].sort((a, b) => b[1].bytes - a[1].bytes);
  const total = rows.reduce((n, [, v]) => n + v.bytes, 0);
  console.log(
    `held-out workload: ${open} open (window, key) states; reachable from the core ${(total / open).toFixed(0)} B each`,
  );
  for (const [k, v] of rows.slice(0, Number(process.env.TM_STATE_HEAP_ROWS ?? 20)))
    console.log(`${(v.bytes / open).toFixed(1).padStart(8)} B ${String(v.n).padStart(8)} × ${k.slice(0, 90)}`);
}

main();
