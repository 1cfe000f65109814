// Mints HS256 JWTs carrying IQ-Stream rights, as a product's backend would (node:crypto only).
import { createHmac } from "node:crypto";

const b64url = (value) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");

/**
 * @param {string} secret the server's --jwt-secret
 * @param {{subscribe?: string[], publish?: string[]}} rights patterns: exact run id, prefix*, or *
 * @param {number} ttlSeconds
 */
export function mintToken(secret, rights, ttlSeconds = 600) {
  const now = Math.floor(Date.now() / 1000);
  const header = b64url({ alg: "HS256", typ: "JWT" });
  const payload = b64url({ sub: "e2e", iat: now, exp: now + ttlSeconds, iqstream: rights });
  const signature = createHmac("sha256", Buffer.from(secret, "utf8")).update(`${header}.${payload}`).digest("base64url");
  return `${header}.${payload}.${signature}`;
}
