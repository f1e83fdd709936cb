import { argon2id, argon2Verify } from 'hash-wasm';

/** OWASP-recommended argon2id parameters (19 MiB, 2 iterations, 1 lane). */
export const ARGON2_PARAMS = { memorySize: 19_456, iterations: 2, parallelism: 1, hashLength: 32 } as const;

/** argon2id PHC string (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`) with a fresh 16-byte salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  return argon2id({ password, salt, ...ARGON2_PARAMS, outputType: 'encoded' });
}

/** Constant-time check of `password` against a PHC string; false (never throws) for malformed hashes. */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  if (!hash.startsWith('$argon2')) return false;
  try {
    return await argon2Verify({ password, hash });
  } catch {
    return false;
  }
}

/** True when `hash` was made with weaker parameters than the current ones (rehash on next login). */
export function needsRehash(hash: string): boolean {
  const m = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(hash);
  if (!m) return true;
  return (
    Number(m[1]) < ARGON2_PARAMS.memorySize ||
    Number(m[2]) < ARGON2_PARAMS.iterations ||
    Number(m[3]) !== ARGON2_PARAMS.parallelism
  );
}
