/** @tidemark/ingest: the HTTP front door (docs/ingest.md). */
export { startIngest, type IngestServer, type IngestOptions } from "./server.js";
export {
  loadIngestConfig,
  defineIngestConfig,
  INGEST_DEFAULTS,
  type IngestConfig,
  type IngestConfigInput,
  type IngestConfigSources,
} from "./config.js";
export { IngestError, type IngestErrorCode } from "./errors.js";
