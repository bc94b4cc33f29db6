/**
 * What keeps secrets out of the support bundle (pure). The CLI never reads Secrets; this is
 * the second line: Secret objects are dropped wherever they appear, env values whose name
 * says credential are redacted, and the noisy or free-form metadata (managedFields, the
 * last-applied annotation, which may hold anything once applied) is removed.
 */
type Json = Record<string, unknown>;

export const REDACTED = '<redacted>';

/** Names of env variables whose values are never written, even when literal. */
const SECRET_NAME = /secret|password|passwd|token|credential|private|(^|_)key($|_)|access_key/i;

export const isSecretName = (name: string): boolean => SECRET_NAME.test(name);

/** A literal env map with credential-like values redacted. */
export function redactEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k, isSecretName(k) ? REDACTED : v]),
  );
}

/** A deep copy without Secret objects and with managedFields / last-applied removed. */
export function sanitize(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => !isSecretObject(v)).map((v) => sanitize(v));
  if (typeof value !== 'object' || value === null) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json)) {
    if (k === 'managedFields') continue;
    if (k === 'annotations' && typeof v === 'object' && v !== null) {
      const ann = { ...(v as Json) };
      delete ann['kubectl.kubernetes.io/last-applied-configuration'];
      out[k] = ann;
      continue;
    }
    if (isSecretObject(v)) continue;
    out[k] = sanitize(v);
  }
  return out;
}

function isSecretObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && (v as Json)['kind'] === 'Secret';
}
