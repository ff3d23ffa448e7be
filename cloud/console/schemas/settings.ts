import { z } from 'zod';
import { csrf } from './form.ts';

export const timeZoneForm = z.object({ timeZone: z.string().max(64), ...csrf });
export const tillQuietForm = z.object({
  minutes: z
    .string()
    .trim()
    .regex(/^\d{1,5}$/, 'a whole number of minutes'),
  ...csrf,
});
