/**
 * Which pane settles a window for each policy (docs/remote-write.md, "What is written";
 * docs/decisions/0039-remote-write.md): the pane after which the policy never revises the window.
 * A TSDB sample cannot be revised, so only that pane is written.
 */
import type { PolicyConfig } from "@tidemark/engine/core";
import type { Pane } from "@tidemark/engine/protocol";

/** The settling kind of a policy, or null when its panes cannot be written (discarding: deltas). */
export type SettleKind = "final" | "on-time" | null;

/**
 * `final` when the policy has a grace or is final-only (its `final` pane closes the window);
 * `on-time` when its grace is 0 (the on-time pane *is* the final one, docs/semantics.md, "Policies
 * are snapshot schedules"); null for a discarding policy, whose panes carry deltas.
 */
export function settleKindOf(policy: Pick<PolicyConfig, "graceMs" | "mode">): SettleKind {
  if (policy.mode === "discarding") return null;
  if (policy.mode === "final-only" || policy.graceMs > 0) return "final";
  return "on-time";
}

export type PaneVerdict = "settled" | "unsettled" | "unknown-policy" | "discarding";

export class SettleRule {
  private readonly kinds: ReadonlyMap<string, SettleKind>;

  constructor(policies: readonly Pick<PolicyConfig, "name" | "graceMs" | "mode">[]) {
    this.kinds = new Map(policies.map((p) => [p.name, settleKindOf(p)]));
  }

  /** The settling kind per policy name, for the logs and docs. */
  describe(): Record<string, SettleKind> {
    return Object.fromEntries(this.kinds);
  }

  /** Whether this pane is the one that settles its window for its policy. */
  verdict(pane: Pick<Pane, "policy" | "kind">): PaneVerdict {
    const kind = this.kinds.get(pane.policy);
    if (kind === undefined) return "unknown-policy";
    if (kind === null) return "discarding";
    return pane.kind === kind ? "settled" : "unsettled";
  }
}
