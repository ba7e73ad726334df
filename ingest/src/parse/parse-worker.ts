/**
 * A parse worker (parse-pool.ts): parses each body it is sent with its time deferred and sends
 * the batch back packed (batch-transfer.ts); a refusal goes back as its code and message.
 */
import { parentPort, workerData } from "node:worker_threads";
import { IngestError } from "../errors.js";
import type { EventBodyOptions } from "../events/event-body.js";
import { packBatch } from "./batch-transfer.js";
import { parseDeferred, type ParseJob } from "./parse-job.js";

export interface ParseRequest {
  readonly id: number;
  readonly job: ParseJob;
  readonly body: Uint8Array;
}

const opts = workerData as EventBodyOptions;
const port = parentPort;
if (!port) throw new Error("parse-worker.js runs in a worker thread (parse-pool.ts)");

port.postMessage({ ready: true });
port.on("message", ({ id, job, body }: ParseRequest) => {
  try {
    const { packed, transfer } = packBatch(
      parseDeferred(job, Buffer.from(body.buffer, body.byteOffset, body.byteLength), opts),
    );
    port.postMessage({ id, packed }, transfer);
  } catch (err) {
    if (err instanceof IngestError) port.postMessage({ id, refused: { code: err.code, message: err.message } });
    else port.postMessage({ id, failed: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
});
