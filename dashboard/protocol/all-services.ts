/**
 * The key service of the engine's all-services panes: `{ service: "*" }`, the numbers across every
 * service merged from sketches (docs/decisions/0030-all-services-panes-in-the-dashboard.md). Ingest
 * refuses "*" as a client service, so it never names a real one; it is never listed or pooled as one.
 */
import { ALL_SERVICES } from "@tidemark/engine/protocol";

export { ALL_SERVICES };

export function isAllServices(service: string): boolean {
  return service === ALL_SERVICES;
}
