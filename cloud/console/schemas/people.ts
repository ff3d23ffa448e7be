import { z } from 'zod';
import { csrf, field } from './form.ts';

export const newPersonForm = z.object({
  name: field(100).min(1, 'a name is needed'),
  login: field(64),
  role: z.enum(['owner', 'staff']),
  ...csrf,
});
