import { z } from 'zod';
import { csrf } from './form.ts';

export const passwordForm = z.object({
  current: z.string().max(1000),
  next: z.string().max(1000),
  repeat: z.string().max(1000),
  ...csrf,
});
