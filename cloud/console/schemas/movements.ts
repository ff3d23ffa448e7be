import { z } from 'zod';
import { parseReportDate } from '../../reports/day-report.ts';
import { csrf, reason, uuid } from './form.ts';

const blankAsMissing = (value: unknown) => (value === '' ? undefined : value);

export const movementQuery = z.object({
  till: z.preprocess(blankAsMissing, uuid.optional()),
  card: z.preprocess(
    (value) => (typeof value === 'string' && value !== '' ? value.trim().toUpperCase() : undefined),
    z
      .string()
      .regex(/^([0-9A-F]{8}|[0-9A-F]{14})$/, '8 or 14 hexadecimal digits')
      .optional(),
  ),
  kind: z.preprocess(blankAsMissing, z.enum(['recharge', 'discharge']).optional()),
  state: z.preprocess(blankAsMissing, z.enum(['pending', 'posted', 'voided']).optional()),
  date: z.preprocess(
    blankAsMissing,
    z
      .string()
      .refine((text) => parseReportDate(text) !== undefined, 'a date like 2026-03-29')
      .optional(),
  ),
});

export const decideForm = z.object({
  decision: z.enum(['post', 'void']),
  evidence: reason,
  ...csrf,
});
