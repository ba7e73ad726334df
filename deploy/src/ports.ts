import { createServer } from "node:net";

/** True when `port` can be bound on `host` right now. */
export function isPortFree(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/** A port the OS reports free on `host` (bind to 0, read, release). */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** `preferred` when free, else any free port. */
export async function preferredOrFreePort(preferred: number, host = "127.0.0.1"): Promise<number> {
  return (await isPortFree(preferred, host)) ? preferred : freePort(host);
}
