import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A CA of a test's own and a server certificate it signed, as files (openssl). */
export interface TestCertificates {
  /** The CA certificate (for NODE_EXTRA_CA_CERTS, or a server's `--tls-ca-cert-file`). */
  ca: string;
  cert: string;
  key: string;
  remove(): void;
}

/**
 * Makes a CA and a server certificate for `localhost` only (a DNS name, no IP address), so a client
 * that checks it against an address rather than the hostname is refused; or for the DNS names given
 * (a stand-in for `chatgpt.com`).
 */
export function makeCertificates(names: readonly string[] = ["localhost"]): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), "adapter-certificates-"));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "ignore" });
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", file("ca.key"), "-out", file("ca.pem"), "-days", "1", "-subj", "/CN=adapter test CA");
  openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", file("server.key"), "-out", file("server.csr"), "-subj", `/CN=${names[0] ?? "localhost"}`);
  writeFileSync(file("san.ext"), `subjectAltName=${names.map((name) => `DNS:${name}`).join(",")}\n`);
  openssl("x509", "-req", "-in", file("server.csr"), "-CA", file("ca.pem"), "-CAkey", file("ca.key"), "-CAcreateserial", "-out", file("server.pem"), "-days", "1", "-extfile", file("san.ext"));
  return { ca: file("ca.pem"), cert: file("server.pem"), key: file("server.key"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A redis-server's arguments for TLS only on `port` with these certificates (clients need no certificate of their own). */
export function redisTlsArguments(port: number, certificates: TestCertificates): string[] {
  return [
    "--port", "0", "--tls-port", String(port),
    "--tls-cert-file", certificates.cert, "--tls-key-file", certificates.key, "--tls-ca-cert-file", certificates.ca,
    "--tls-auth-clients", "no",
  ];
}
