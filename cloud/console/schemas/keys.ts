import { z } from 'zod';
import { csrf, field, reason } from './form.ts';

const keyHash = z.string().regex(/^[0-9a-f]{64}$/, 'not a key of this list');

export const issueKeyForm = z.object({ reason, ...csrf });
export const revokeKeyForm = z.object({ key: keyHash, reason, ...csrf });
export const assignKeyForm = z.object({ key: keyHash, reason, ...csrf });
export const creditCostForm = z.object({
  creditCost: z
    .string()
    .trim()
    .regex(/^\d{1,8}(\.\d{1,4})?$/, 'euros like 0.50, at most 4 decimals'),
  reason: field(500).optional(),
  ...csrf,
});
export const topUpForm = z.object({
  credits: z
    .string()
    .trim()
    .regex(/^\d{1,12}$/, 'a whole number of credits'),
  reason,
  ...csrf,
});
