import { z } from 'zod';

export const auditQuery = z.object({
  before: z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number)
    .optional(),
});
