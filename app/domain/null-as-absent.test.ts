/**
 * Issue 23 item 9: JSON clients (the seeds' own among them) send `null` for "no value", e.g. `aff_code: null`
 * at registration without an invite link. Over every body schema of the console's write paths: for each field
 * that may be left out, sending it as null must decide exactly as leaving it out does (same data, or the same
 * field errors), and every required field must still refuse null.
 */
import type { TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { createUserSchema, updateUserSchema } from '#app/domain/users/users.server.ts';
import { deleteSelfSchema, notificationSchema, transferSchema, updateSelfSchema } from './account/schemas.ts';
import { PasswordLoginSchema } from './auth/login.server.ts';
import { ResetConfirmSchema, ResetRequestSchema } from './auth/password-reset.server.ts';
import { RegisterSchema } from './auth/register.server.ts';
import {
  batchTagSchema,
  createChannelSchema,
  tagEditSchema,
  updateChannelSchema,
} from './channels/channels.server.ts';
import { unsavedChannelSchema } from './channels/relay-ops.server.ts';
import { InputError } from './errors.ts';
import { mayBeAbsent } from './input.ts';
import { emailBindSchema } from './oauth/email-bind.server.ts';
import { createOrderSchema } from './payments/orders.server.ts';
import {
  createRedemptionSchema,
  redeemSchema,
  updateRedemptionSchema,
} from './redemptions/redemptions.server.ts';
import { createTokenSchema, statusOnlySchema, updateTokenSchema } from './tokens/tokens.server.ts';
import { parseInput } from './validation.ts';
import { versionFormSchema } from './versions/versions.server.ts';

const SCHEMAS: Record<string, z.ZodObject> = {
  RegisterSchema,
  PasswordLoginSchema,
  ResetRequestSchema,
  ResetConfirmSchema,
  emailBindSchema,
  createUserSchema,
  updateUserSchema,
  updateSelfSchema,
  deleteSelfSchema,
  notificationSchema,
  transferSchema,
  createTokenSchema,
  updateTokenSchema,
  statusOnlySchema,
  createChannelSchema,
  updateChannelSchema,
  tagEditSchema,
  batchTagSchema,
  unsavedChannelSchema,
  createRedemptionSchema,
  updateRedemptionSchema,
  redeemSchema,
  versionFormSchema,
  createOrderSchema,
};

const t = ((key: string) => key) as TFunction;

type Outcome = { ok: true; data: unknown } | { ok: false; fields: string[] };

function outcome(schema: z.ZodType, value: unknown): Outcome {
  try {
    return { ok: true, data: parseInput(t, schema, value, { ns: 'demo', messages: 'raw' }) };
  } catch (error) {
    if (error instanceof InputError) return { ok: false, fields: Object.keys(error.fieldErrors).sort() };
    throw error;
  }
}

describe('null means absent over the console body schemas', () => {
  let optional = 0;
  let required = 0;

  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`${name}: null in a field that may be left out decides as leaving it out; a required field refuses null`, () => {
      for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
        if (mayBeAbsent(field)) {
          optional += 1;
          expect(outcome(schema, { [key]: null }), `${name}.${key}`).toEqual(outcome(schema, {}));
        } else if (!field.safeParse(null).success) {
          required += 1;
          const refused = outcome(schema, { [key]: null });
          expect(refused.ok, `${name}.${key}`).toBe(false);
          if (!refused.ok) expect(refused.fields, `${name}.${key}`).toContain(key);
        }
      }
    });
  }

  it('covered the optional and the required fields', () => {
    expect(optional).toBeGreaterThan(40);
    expect(required).toBeGreaterThan(0);
    console.log(`null-as-absent: ${optional} optional fields, ${required} required fields checked`);
  });
});
