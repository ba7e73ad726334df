/**
 * A self-signed certificate for 127.0.0.1 made with openssl (EC P-256, one day), for the TLS tests:
 * the certificate is its own CA, so a client trusts it by passing the certificate file.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export interface SelfSigned {
  readonly certFile: string;
  readonly keyFile: string;
}

export function selfSignedCert(dir: string): SelfSigned {
  const certFile = join(dir, "cert.pem");
  const keyFile = join(dir, "key.pem");
  const subject = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"];
  const key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", keyFile];
  execFileSync("openssl", ["req", "-x509", ...key, "-out", certFile, "-days", "1", ...subject], { stdio: "ignore" });
  return { certFile, keyFile };
}
