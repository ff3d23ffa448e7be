import { z } from 'zod';
import { ledgerErrors } from '../../errors.ts';

/**
 * The console's forms and queries are validated with zod schemas, one file per resource; a
 * problem is 400 InvalidInput naming the field, said on the form's page.
 */
export function parseForm<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw ledgerErrors.invalidInput(
      `${issue?.path.join('.') || 'form'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/** A text field, trimmed; `max` characters at most. */
export const field = (max: number) => z.string().trim().max(max, `at most ${max} characters`);

/** The reason an action that moves money or changes a key must give. */
export const reason = z
  .string()
  .trim()
  .min(1, 'say why (it goes in the audit log)')
  .max(500, 'at most 500 characters');

export const uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'not an id');

export const csrf = { _csrf: z.string().optional() };
