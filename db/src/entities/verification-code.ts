import { defineEntity, p } from '@mikro-orm/core';

/**
 * What a verification row proves: an e-mail code for registration or for binding an address, or a password
 * reset link token.
 */
export const VerificationPurpose = { Register: 'register', Bind: 'bind', Reset: 'reset' } as const;
export type VerificationPurpose = (typeof VerificationPurpose)[keyof typeof VerificationPurpose];

/**
 * A one-time secret sent by e-mail (seed 000 §5 "send code", seed 001 §7 "Password reset"). Only the
 * sha-256 hex of the secret is stored; a row is usable once (`consumedAt`), until `expiresAt`, and for a
 * bounded number of wrong guesses (`attempts`).
 */
export const VerificationCodeSchema = defineEntity({
  name: 'VerificationCode',
  tableName: 'verification_codes',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    /** lower-cased address */
    email: p.string().length(255),
    purpose: p.string().length(16),
    /** sha-256 hex of the code or token */
    codeHash: p.string().length(64),
    expiresAt: p.datetime(),
    consumedAt: p.datetime().nullable(),
    /** wrong guesses against this row */
    attempts: p.integer().default(0),
    ip: p.string().length(64).default(''),
    createdAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date())
      .index('verification_codes_created_at_index'),
  },
  indexes: [{ name: 'verification_codes_email_purpose_index', properties: ['email', 'purpose'] }],
});

export class VerificationCode extends VerificationCodeSchema.class {}
VerificationCodeSchema.setClass(VerificationCode);
